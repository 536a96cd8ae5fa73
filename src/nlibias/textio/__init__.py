"""Reading user text (UTF-8, CSV, JSON, YAML, the text door) and writing tables: the bottom layer."""

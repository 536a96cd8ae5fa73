"""User text read the one way (UTF-8 with line-numbered errors, strict CSV and JSON, YAML without
duplicate keys, the text door) and tables written as text or Markdown: the bottom layer."""

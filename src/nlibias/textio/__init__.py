"""Reading user text files the one way (the bottom layer above :mod:`nlibias.errors`, so every
reader, benchmark sources included, can use it): UTF-8 with line-numbered errors
(:mod:`~nlibias.textio.text_files`), strict CSV rows, YAML without duplicate keys
(:mod:`~nlibias.textio.yaml_unique`); and writing tables as aligned text or Markdown
(:mod:`~nlibias.textio.tables`)."""

// keeps the helper library non-empty while it has no sources

"""Inline completion, the server's side: the request, its prompts (full and for the bundled
model), one request per editor (:mod:`.service`), and the suggestion cleaned as it grows
(:mod:`.cleaner`) and guarded: code or nothing (:mod:`.suggestions`)."""

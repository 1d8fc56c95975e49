"""Fix and Edit with AI, the server's side: the request and its full prompt, the reading of the
answer (:mod:`.request`), the small model's prompt and grammar (:mod:`.small_prompt`), the one
checked change to one cell that ``POST fix`` answers (:mod:`.service`), and **Accept and run**
under the run policy (:mod:`.consent`, ``POST fix/trial``)."""

"""Untrusted content shown safely: what an output of model-written or untrusted cells would
fetch from another host when rendered (:mod:`.remote_content`), the rule of the notebook's
render gate, twin of the browser's ``labextension/src/untrusted/remoteContent.ts`` (both
tested against ``tests/vectors/remote_content.json``)."""

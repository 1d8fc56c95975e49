"""Undo for the kernel: before an agent turn's step (and a ``%%ai`` cell's generated code)
runs, the kernel keeps a frozen copy-on-write copy of itself (on Linux, a forked child that
waits: it costs only the pages the kernel changes afterwards), and Undo puts the user's
variables back from it: names created since are removed, names rebound, deleted or changed in
place come back (pickle protocol 5, out-of-band buffers copied once from the child), and what cannot
come back (an object that does not pickle, an open file, socket or connection) is named in one
line.

Modules: :mod:`.store` (the snapshots, their records and budget), :mod:`.child` (the waiting
copy), :mod:`.transfer` (how values cross), :mod:`.kernel` (the user-expression entry points
every driver calls), :mod:`.ai` (``%%ai``'s snapshot and ``%ai undo``).
"""

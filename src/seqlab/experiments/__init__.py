"""The chapter's own training runs: what only the chapter needs, never what a practitioner imports.

``lm`` (§14.57-§14.59), ``forecast`` (§14.63), ``seq2seq`` (§14.48-§14.49) and
``parallel`` (worker processes for independent seeded runs). Heavy runs are
gated by HEAVY_EVAL and stored through :mod:`seqlab.store`.
"""

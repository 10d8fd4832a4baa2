"""The chapter's own training runs: what only the chapter needs, never what a practitioner imports.

``lm`` (§14.56-§14.59), ``transformer_tasks`` (§14.53-§14.54), ``seq2seq`` (§14.48-§14.49)
and ``forecast`` (§14.63). Independent seeded runs go to worker processes through
:mod:`seqlab.parallel`. Heavy runs are gated by HEAVY_EVAL and stored through :mod:`seqlab.store`.
"""

"""The chapter, one module per section; each returns tables, figures and notes through the registry."""
from .base import Context, Progress, SectionResult, UnknownSectionError, get_section, registry, run_section

__all__ = ["Context", "Progress", "SectionResult", "UnknownSectionError", "get_section", "registry", "run_section"]

"""Building the chapter: the HEAVY_EVAL gate and the verified artifact cache."""
from .artifacts import ArtifactError, heavy_eval, read_artifact_csv, read_artifact_json, verify_artifacts, write_artifacts

__all__ = ["ArtifactError", "heavy_eval", "read_artifact_csv", "read_artifact_json", "verify_artifacts",
           "write_artifacts"]

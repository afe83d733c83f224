"""Export of the models to ``.lp``, ``.mps``, ``.nl`` and ``.gms`` files (:mod:`.writers`), to the conic
formats ``.cbf`` and ``.ptf`` (:mod:`.cbf`), the ``formulations/`` library of verified instances
(:mod:`.library`; its optima verified by :mod:`.verification`, its files compared by :mod:`.differences`), and
ripopt, the external ``.nl`` solver that reads them back (:mod:`.ripopt`).

    from tpm_models.export.writers import export, write
    export(16, X, y, c=0, nu=0.3, alpha=1.0, path="eq16.lp")        # build (16) and write it
    write(model, "model.nl.gz")                                      # any built model; .gz compresses
"""

from tpm_models.export.differences import text_difference
from tpm_models.export.library import check_library, generate_library, read_manifest
from tpm_models.export.ripopt import run_ripopt
from tpm_models.export.verification import verify
from tpm_models.export.writers import (
    FORMATS,
    check_format,
    export,
    format_of,
    formats_for,
    gzip_bytes,
    model_text,
    model_texts,
    read_text,
    write,
)

__all__ = [
    "FORMATS", "check_format", "check_library", "export", "format_of", "formats_for", "generate_library",
    "gzip_bytes", "model_text", "model_texts", "read_manifest", "read_text", "run_ripopt", "text_difference",
    "verify", "write",
]

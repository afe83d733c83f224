"""``python -m tpm_models.cli``: the ``tpm-models`` command."""

import sys

from tpm_models.cli import main

sys.exit(main())

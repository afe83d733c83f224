"""A command's logging set-up (``tpm_models.cli.main.logging_configured``) holds while it runs and is undone after.

Truth: the logging state read before and after (the ``tpm_models`` logger's level, the root logger's level and
handlers), and a warning of the library that pytest's log capture must still see after a ``--quiet`` command ran
in the same process (the run of ``benchmarks.cli.main([... "--quiet"])`` by the learn tests had left the library
at ERROR, and a later test's warning went unseen).
"""

import logging

from tpm_models.cli.main import logging_configured


def test_a_quiet_command_leaves_the_library_logger_as_it_found_it(caplog):
    library, root = logging.getLogger("tpm_models"), logging.getLogger()
    before = (library.level, root.level, list(root.handlers))
    with logging_configured(0, quiet=True):
        assert library.level == logging.ERROR
    assert (library.level, root.level, list(root.handlers)) == before
    with logging_configured(2):
        assert library.level == logging.DEBUG
    assert (library.level, root.level, list(root.handlers)) == before
    logging.getLogger("tpm_models.solvers.ipopt").warning("seen after the command")
    assert "seen after the command" in caplog.text

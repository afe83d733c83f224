"""The paper's models as Pyomo builders, each registered under its equation number.

===================  ==========================================================================
module               what it holds
===================  ==========================================================================
``registry``         the front door: :func:`register_model`, :func:`build`, :func:`model_info`
``shapes``           the shapes the paper's QPs share, and the constant their duals omit
``binary``           (2)-(5), (10)-(13), recovery (6)-(7), decisions (8), (14)
``multiclass``       (15), (16), (19), recovery (17), (20), decision (18)
``robust``           (23), (26)-(29)
``semi_infinite``    (22) with uncertain parameters, and over finite scenario sets
``robust_duals``     the duals derived here: (23D), (27D)-(29D)
``robust_kernel``    the robust kernel model derived here: (23K)
``norms``            p-norms, dual norms and the (25) oracle
``uncertainty``      the uncertainty sets and the uncertain data of a model (UncertainRow, UncertainTerm)
``counterpart``      :func:`robust_counterpart`: a nominal model and its uncertain data -> the counterpart model
``declare``          uncertain data from a few numbers: a set kind and size, row-wise uncertainty
``derived``          the paper's counterparts derived by it: (15R), (2R), (3R)
``recovery``         the hyperplane from the dual: w and the interval of theta
``wasserstein``      the distributionally robust (15) over type-1 Wasserstein balls: (23W)
===================  ==========================================================================

Importing this package registers every builder.
"""

import pyomo.repn.plugins

from tpm_models.models import (  # noqa: F401
    binary,
    derived,
    multiclass,
    robust,
    robust_duals,
    robust_kernel,
    semi_infinite,
    wasserstein,
)
from tpm_models.models.counterpart import register_robustified, robust_counterpart
from tpm_models.models.registry import (
    REGISTRY,
    ModelInfo,
    all_models,
    build,
    group_keys,
    model_info,
    register_counterpart,
    register_model,
    verifiable_keys,
)

# The builders import pyomo.core, not pyomo.environ (0.5-1 s of a process's start: docs/architecture.md); Pyomo's
# model writers (``model.write("m.lp")``, ``.nl``, ``.mps``, ``.gms``) are registered here as pyomo.environ would
# register them (its per-package ``load()``; 0.03 s), so a built model writes itself as before.
pyomo.repn.plugins.load()

__all__ = ["REGISTRY", "ModelInfo", "all_models", "build", "group_keys",
           "model_info", "register_counterpart", "register_model", "register_robustified",
           "robust_counterpart", "verifiable_keys"]

"""The certificate's tolerances: what a point reported optimal must meet to be certified
(:mod:`tpm_models.certify.certificate`), and the two the solve path shares with it (the PSD test of a quadratic form,
a cone's apex). One place, below the solve path, so that the solve path and the certificate read the same numbers
and the certificate depends on nothing above it.
"""

FEASIBILITY_TOL = 1e-6
"""Largest constraint or bound violation accepted at a point reported optimal (absolute;
the data are min-max scaled to [0, 1], so rows are of order one)."""


PSD_TOL = 1e-12
"""The one PSD tolerance of the library: an eigenvalue of a quadratic form (objective or row) more negative than
``-PSD_TOL`` times the form's largest absolute eigenvalue (at least 1) makes the form not convex. Used by the class
reading (:func:`tpm_models.solvers.structure.model_traits`) and by the conic mapping."""


KKT_TOL = 1e-6
"""Largest scaled KKT residual (stationarity, complementarity, dual sign) of a certified optimum
(:mod:`tpm_models.certify.certificate`). Measured on the paper's models (Iris, Wine): PIQP, DAQP, HiGHS, Ipopt,
Clarabel, and Gurobi, CPLEX, Xpress on the QPs, reach 1e-9 or less; a wrong point (the outer exponent dropped,
a saddle) is off by O(0.1)."""


GAP_TOL = 1e-6
r"""Largest duality gap :math:`\sum_i|y_i|\,\mathrm{slack}_i` (plus the bounds') of a certified optimum relative to
its objective :math:`|f|`, once the gap is above :data:`GAP_FLOOR`. The gap bounds the objective's error on a
convex model; the complementarity test, relative to :math:`\max(1, |f|)`, does not see it when the objective is a
small difference of large terms ((28) on 10^4 points: -5.0e-5 from terms summing to 0.5 in absolute value, where
Ipopt stops at a gap of 6.3e-10 and an objective 6.3e-6 off, relative). Such a point is "optimal, not certified",
not failed. Measured on (15) for Iris: Xpress's gap is 1.9e-7 of the objective (its objective 8.5e-8 off), every
other backend's 1e-8 or less."""


GAP_FLOOR = 1e-12
"""An absolute duality gap at or below this is certified whatever the objective (an optimum of 0)."""


KKT_FAIL_TOL = 1e-4
"""Above this scaled KKT residual the certificate fails (``CERTIFICATE_FAILED``); between :data:`KKT_TOL` and it
the result is "optimal, not certified": the duals that Gurobi and Xpress return for quadratic (cone) rows are
accurate to ~1e-5 only (measured stationarity 1e-6..1.1e-5 on (27)-(29) for Iris and Wine, their objectives within
1e-7 of Clarabel's), too loose to prove optimality, not a sign of a wrong point."""


APEX_TOL = 1e-10
"""Below this :math:`\\|\\nabla g(x)\\|` a quadratic cone row sits at the apex and its scalar dual is NaN."""

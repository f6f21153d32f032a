"""Analyse: what the runs' results say (ratio grid, learning curves, ablations, rho_hat convergence) and the
paper's numbers they are compared with."""

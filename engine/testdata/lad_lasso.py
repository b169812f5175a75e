# Reference optimum of the L1-regularised absolute-loss regression
#   min_x (1/n) Σ |aₖᵀx − bₖ| + l1·‖x‖₁
# on housing_scale (no bias), as a linear program solved by HiGHS.
import sys, numpy as np
from scipy.optimize import linprog
from scipy.sparse import csr_matrix, hstack, identity
def read(path):
    rows, cols, vals, y = [], [], [], []
    d = 0
    for i, line in enumerate(open(path)):
        f = line.split()
        y.append(float(f[0]))
        for t in f[1:]:
            j, v = t.split(':'); j = int(j) - 1
            rows.append(i); cols.append(j); vals.append(float(v)); d = max(d, j + 1)
    return csr_matrix((vals, (rows, cols)), shape=(len(y), d)), np.array(y)
A, b = read(sys.argv[1]); n, d = A.shape
for l1 in map(float, sys.argv[2:]):
    c = np.concatenate([l1 * np.ones(2 * d), np.ones(2 * n) / n])
    Aeq = hstack([A, -A, -identity(n), identity(n)]).tocsc()
    r = linprog(c, A_eq=Aeq, b_eq=b, bounds=(0, None), method="highs",
                options={"primal_feasibility_tolerance": 1e-10, "dual_feasibility_tolerance": 1e-10})
    x = r.x[:d] - r.x[d:2 * d]
    p = np.abs(A @ x - b).mean() + l1 * np.abs(x).sum()
    print(f"l1={l1} P*={p:.15g} lp={r.fun:.15g} nonzeros={np.sum(np.abs(x) > 1e-9)} x={np.array2string(x, precision=6)}")

"""lasso-peers.py: the lasso and the elastic net (squared loss) on housing_scale
and abalone_scale, ours (adaspdc train, glmnet) against scikit-learn's Lasso
and ElasticNet at tol=1e-14, without intercept (ours has none):

    ours:  (1/2n)‖Xw − y‖² + l1‖w‖₁ + (λ/2)‖w‖²
    sklearn: (1/2n)‖y − Xw‖² + α·ρ‖w‖₁ + ½α(1 − ρ)‖w‖²,  l1 = αρ, λ = α(1 − ρ)

Prints, per problem, both objectives (evaluated here on the same rows), their
relative difference, scikit-learn's fit time (the fit alone, median of 5) and
ours (the whole process, median of 5).

    /usr/bin/python3 bench/lasso-peers.py BINARY DATA_DIR   (Debian: apt-get install python3-sklearn)
"""
import json, subprocess, sys, time, statistics
import numpy as np
from sklearn.datasets import load_svmlight_file
from sklearn.linear_model import Lasso, ElasticNet

binary, data_dir = sys.argv[1], sys.argv[2]
for name in ["housing_scale", "abalone_scale"]:
    path = f"{data_dir}/{name}"
    X, y = load_svmlight_file(path)
    X = X.toarray()
    n = X.shape[0]
    for alpha, rho in [(0.01, 1.0), (0.01, 0.5)]:
        l1, lam = alpha * rho, alpha * (1 - rho)
        obj = lambda w: 0.5 / n * np.sum((X @ w - y) ** 2) + l1 * np.abs(w).sum() + 0.5 * lam * w @ w
        times = []
        for _ in range(5):
            m = Lasso(alpha=alpha, fit_intercept=False, tol=1e-14, max_iter=1000000) if rho == 1 else \
                ElasticNet(alpha=alpha, l1_ratio=rho, fit_intercept=False, tol=1e-14, max_iter=1000000)
            t0 = time.perf_counter(); m.fit(X, y); times.append(time.perf_counter() - t0)
        ws = m.coef_
        ours_t = []
        for _ in range(5):
            t0 = time.perf_counter()
            subprocess.run([binary, "train", "-quiet", "-data", path, "-loss", "squared", "-lambda", repr(lam),
                            "-l1", repr(l1), "-tol", "1e-10", "-model", "/tmp/lasso-peers.json"], check=True, capture_output=True)
            ours_t.append(time.perf_counter() - t0)
        wo = np.array(json.load(open("/tmp/lasso-peers.json")).get("weights") or [])
        if wo.size == 0:
            mj = json.load(open("/tmp/lasso-peers.json"))
            wo = np.zeros(mj["dim"]); wo[mj["nonzero_index"]] = mj["nonzero_weight"]
        wo = np.pad(wo, (0, max(0, X.shape[1] - wo.size)))[:X.shape[1]]
        po, pss = obj(wo), obj(ws)
        print(f"{name} alpha={alpha} l1_ratio={rho}: P ours {po:.15g} sklearn {pss:.15g} rel diff {(po - pss) / abs(pss):.2e}; "
              f"sklearn fit {statistics.median(times)*1e3:.2f} ms, ours whole process {statistics.median(ours_t)*1e3:.1f} ms; "
              f"nonzeros {np.count_nonzero(wo)} / {np.count_nonzero(ws)}")

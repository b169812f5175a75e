// Package vr is the variance-reduced family: SAG, SAGA and SVRG on one
// coordinate store that applies xⱼ ← prox_{ηg}(xⱼ − ηcⱼ) to every
// coordinate each iteration, densely or lazily (scaled for L2, with a
// closed-form catch-up for an L1 term). The steps are in units of
// L = max‖aₖ‖²/γ; the certificate pairs the duals φ′(aₖᵀx) with x.
package vr

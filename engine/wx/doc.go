// Package wx is Wang & Xiao's family ("Exploiting strong convexity from
// data with primal-dual first-order algorithms", ICML 2017): the batch
// primal-dual method (bpd) and its adaptive form (adabpd), their
// stochastic SPDC with adaptive steps (wx-adaspdc), and the dual-free SPDC
// with and without adaptation (dfspdc, adfspdc). The adaptive forms take
// the strong convexity the data lend, estimated from the gaps by the
// robust rule of wx_adapt.go.
package wx

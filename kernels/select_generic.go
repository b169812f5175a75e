//go:build noasm || !amd64

package kernels

// supportedImpls returns the pure-Go kernels, the only ones built without
// assembly.
func supportedImpls() []impl { return []impl{genericImpl} }

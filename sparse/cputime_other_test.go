//go:build !unix

package sparse

func processCPU() (int64, bool) { return 0, false }

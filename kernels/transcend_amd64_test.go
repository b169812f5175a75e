//go:build !noasm

package kernels

import (
	"math"
	"testing"

	"github.com/klauspost/cpuid/v2"
)

// TestTranscendFastPathReported checks that the assembly reports a block
// with every value in range as such: the Go side's fix-up pass over x,
// harmless but a pass, must not run then.
func TestTranscendFastPathReported(t *testing.T) {
	if !cpuid.CPU.Supports(cpuid.AVX512F) {
		t.Skip("no AVX-512")
	}
	for n := 1; n <= 19; n++ {
		x, dst := make([]float64, n), make([]float64, n)
		u := make([]float64, n)
		for i := range x {
			x[i] = -float64(i) / 3
			u[i] = float64(i) / 19
		}
		if !expNegAVX512Asm(&dst[0], &x[0], n, &expTable, &expConsts) {
			t.Fatalf("ExpNeg, n=%d: values in range reported outside", n)
		}
		if !log1pUnitAVX512Asm(&dst[0], &u[0], n, &log1pConsts) {
			t.Fatalf("Log1pUnit, n=%d: values in range reported outside", n)
		}
		x[n-1], u[n-1] = math.NaN(), 2
		if expNegAVX512Asm(&dst[0], &x[0], n, &expTable, &expConsts) || log1pUnitAVX512Asm(&dst[0], &u[0], n, &log1pConsts) {
			t.Fatalf("n=%d: a value outside the range not reported", n)
		}
	}
}

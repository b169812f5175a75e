//go:build linux

package hugepage

import (
	"bufio"
	"os"
	"strconv"
	"strings"
	"testing"
	"unsafe"
)

// TestMakeAdvisesTheWholeSlice checks in /proc/self/smaps that every
// mapping a slice from Make overlaps carries the huge page advice ("hg"
// in VmFlags), its first and last 4 KiB pages included: advice over the
// inner huge pages alone left the ends in 4 KiB pages.
func TestMakeAdvisesTheWholeSlice(t *testing.T) {
	if b, err := os.ReadFile("/sys/kernel/mm/transparent_hugepage/enabled"); err != nil || strings.Contains(string(b), "[never]") {
		t.Skip("no transparent huge pages here")
	}
	for _, n := range []int{Threshold / 8, Size/8 + 3, 3*Size/8 + 1000} {
		s := Make[float64](n)
		lo := uintptr(unsafe.Pointer(unsafe.SliceData(s)))
		hi := lo + uintptr(8*n)
		maps := advisedMappings(t)
		for _, p := range []uintptr{lo, hi - 1, (lo + hi) / 2} {
			advised, found := false, false
			for _, m := range maps {
				if m.lo <= p && p < m.hi {
					advised, found = m.advised, true
				}
			}
			if !found || !advised {
				t.Errorf("Make[float64](%d): byte %#x of [%#x, %#x) lies in no mapping advised for huge pages (mapped: %v)", n, p, lo, hi, found)
			}
		}
		s[0], s[n-1] = 1, 1 // keep s alive, and touch its ends
	}
}

type mapping struct {
	lo, hi  uintptr
	advised bool
}

// advisedMappings reads the process's mappings and whether each carries
// the huge page advice.
func advisedMappings(t *testing.T) []mapping {
	f, err := os.Open("/proc/self/smaps")
	if err != nil {
		t.Skip(err)
	}
	defer f.Close()
	var maps []mapping
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if rng, _, ok := strings.Cut(line, " "); ok && strings.Contains(rng, "-") && !strings.HasSuffix(rng, ":") {
			a, b, _ := strings.Cut(rng, "-")
			lo, err1 := strconv.ParseUint(a, 16, 64)
			hi, err2 := strconv.ParseUint(b, 16, 64)
			if err1 == nil && err2 == nil {
				maps = append(maps, mapping{lo: uintptr(lo), hi: uintptr(hi)})
			}
			continue
		}
		if flags, ok := strings.CutPrefix(line, "VmFlags:"); ok && len(maps) > 0 {
			maps[len(maps)-1].advised = strings.Contains(" "+flags+" ", " hg ")
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return maps
}

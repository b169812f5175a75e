package kernels

import (
	"syscall"
	"testing"
	"unsafe"
)

// guardedFloat64s returns a zeroed slice of n float64s whose last element is
// immediately followed by an inaccessible page, so that a kernel reading or
// writing even one element past the end crashes the test instead of passing
// silently.
func guardedFloat64s(t testing.TB, n int) []float64 {
	b := guardedBytes(t, n*8)
	if n == 0 {
		return []float64{}
	}
	return unsafe.Slice((*float64)(unsafe.Pointer(&b[0])), n)
}

// guardedInt32s is guardedFloat64s for int32.
func guardedInt32s(t testing.TB, n int) []int32 {
	b := guardedBytes(t, n*4)
	if n == 0 {
		return []int32{}
	}
	return unsafe.Slice((*int32)(unsafe.Pointer(&b[0])), n)
}

// guardedBytes maps enough pages for size bytes plus one guard page, revokes
// access to the guard page and returns the size bytes that end at it. The
// mapping is released when the test ends.
func guardedBytes(t testing.TB, size int) []byte {
	page := syscall.Getpagesize()
	data := (size + page - 1) / page * page
	mem, err := syscall.Mmap(-1, 0, data+page, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_ANON|syscall.MAP_PRIVATE)
	if err != nil {
		t.Fatalf("mmap: %v", err)
	}
	t.Cleanup(func() { syscall.Munmap(mem) })
	if err := syscall.Mprotect(mem[data:], syscall.PROT_NONE); err != nil {
		t.Fatalf("mprotect: %v", err)
	}
	return mem[data-size : data : data]
}

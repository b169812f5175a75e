//go:build !noasm

#include "textflag.h"

// func prefetchAsm(p unsafe.Pointer)
TEXT ·prefetchAsm(SB), NOSPLIT, $0-8
	MOVQ p+0(FP), AX
	PREFETCHT0 (AX)
	RET

// func prefetch2Asm(p, q unsafe.Pointer)
TEXT ·prefetch2Asm(SB), NOSPLIT, $0-16
	MOVQ p+0(FP), AX
	MOVQ q+8(FP), BX
	PREFETCHT0 (AX)
	PREFETCHT0 (BX)
	RET

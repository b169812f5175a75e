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

// func prefetchRangeAsm(p unsafe.Pointer, n int)
// Prefetches the n bytes from p, one PREFETCHT0 per 64-byte line, the
// first line included even when n ≤ 0 is not (n > 0 is the caller's).
TEXT ·prefetchRangeAsm(SB), NOSPLIT, $0-16
	MOVQ p+0(FP), AX
	MOVQ n+8(FP), CX
	LEAQ (AX)(CX*1), DX
	ANDQ $~63, AX

loop:
	PREFETCHT0 (AX)
	ADDQ $64, AX
	CMPQ AX, DX
	JB   loop
	RET

// func prefetchIndexedAsm(base unsafe.Pointer, idx []int32, size int)
// Prefetches base + size·idx[k] for every k (PREFETCHT0).
TEXT ·prefetchIndexedAsm(SB), NOSPLIT, $0-40
	MOVQ base+0(FP), AX
	MOVQ idx_base+8(FP), SI
	MOVQ idx_len+16(FP), CX
	MOVQ size+32(FP), BX
	TESTQ CX, CX
	JE   done

next:
	MOVLQSX (SI), DX
	IMULQ BX, DX
	PREFETCHT0 (AX)(DX*1)
	ADDQ $4, SI
	DECQ CX
	JNE  next

done:
	RET

//go:build !noasm

#include "textflag.h"

// Sparse kernels (AVX2 + FMA, used by both the avx2fma and the avx512
// implementations).
//
// The entries are processed four at a time. Their values are loaded as one
// vector, and so are four elements of x, assembled from scalar loads: on the
// AMD Zen 5 these kernels were tuned on, VGATHERDPD (ymm or zmm) and
// VSCATTERDPD were slower than scalar loads and stores, so neither is used.
// SparseAxpy multiplies the four values by alpha in one vector operation,
// then adds each lane to its element of y and stores it before the next lane
// loads, so that a repeated index sees the earlier update, as in the
// sequential definition.
//
// Indices are read two at a time as one 64-bit word, which halves the index
// loads; each is sign-extended and compared unsigned against the length, so
// that negative indices are rejected too. All four indices of a step are
// checked before any element they address is read or written.

#include "sparse_amd64.h"

// func sparseDotAVX2Asm(val *float64, idx *int32, n int, x *float64, xlen int) (sum float64, ok bool)
TEXT ·sparseDotAVX2Asm(SB), NOSPLIT, $0-49
	MOVQ   val+0(FP), SI
	MOVQ   idx+8(FP), DI
	MOVQ   n+16(FP), CX
	MOVQ   x+24(FP), DX
	MOVQ   xlen+32(FP), R8
	VXORPD Y0, Y0, Y0
	VXORPD Y1, Y1, Y1
	XORQ   AX, AX
	MOVQ   CX, R9
	ANDQ   $~7, R9
	JZ     dot4

dot8:
	// Two accumulators, so that consecutive FMAs are independent.
	INDEX4(0)
	GATHER4(DX, X4, X5, Y4)
	VFMADD231PD (SI)(AX*8), Y4, Y0
	INDEX4(16)
	GATHER4(DX, X6, X7, Y6)
	VFMADD231PD 32(SI)(AX*8), Y6, Y1
	ADDQ        $8, AX
	CMPQ        AX, R9
	JNE         dot8

dot4:
	MOVQ        CX, R9
	SUBQ        AX, R9
	CMPQ        R9, $4
	JB          reduce
	INDEX4(0)
	GATHER4(DX, X4, X5, Y4)
	VFMADD231PD (SI)(AX*8), Y4, Y0
	ADDQ        $4, AX

reduce:
	VADDPD       Y1, Y0, Y0
	VEXTRACTF128 $1, Y0, X1
	VADDPD       X1, X0, X0
	VPERMILPD    $1, X0, X1
	VADDSD       X1, X0, X0
	CMPQ         AX, CX
	JE           done

dot1:
	MOVLQSX     (DI)(AX*4), BX
	CMPQ        BX, R8
	JAE         bad
	VMOVSD      (DX)(BX*8), X4
	VFMADD231SD (SI)(AX*8), X4, X0
	INCQ        AX
	CMPQ        AX, CX
	JNE         dot1

done:
	VZEROUPPER
	VMOVSD X0, sum+40(FP)
	MOVB   $1, ok+48(FP)
	RET

bad:
	VZEROUPPER
	MOVQ $0, sum+40(FP)
	MOVB $0, ok+48(FP)
	RET

// func sparseAxpyAVX2Asm(alpha float64, val *float64, idx *int32, n int, y *float64, ylen int) (ok bool)
TEXT ·sparseAxpyAVX2Asm(SB), NOSPLIT, $0-49
	VBROADCASTSD alpha+0(FP), Y8
	MOVQ         val+8(FP), SI
	MOVQ         idx+16(FP), DI
	MOVQ         n+24(FP), CX
	MOVQ         y+32(FP), DX
	MOVQ         ylen+40(FP), R8
	XORQ         AX, AX
	MOVQ         CX, R9
	ANDQ         $~3, R9
	JZ           tail

axpy4:
	INDEX4(0)
	VMULPD (SI)(AX*8), Y8, Y0
	SCATTERADD4(DX, Y0, X0, X1, X2)
	ADDQ   $4, AX
	CMPQ   AX, R9
	JNE    axpy4

tail:
	CMPQ AX, CX
	JE   done

axpy1:
	// Multiply, then add: the same two roundings as the vector steps.
	MOVLQSX (DI)(AX*4), BX
	CMPQ    BX, R8
	JAE     bad
	VMULSD  (SI)(AX*8), X8, X0
	VADDSD  (DX)(BX*8), X0, X0
	VMOVSD  X0, (DX)(BX*8)
	INCQ    AX
	CMPQ    AX, CX
	JNE     axpy1

done:
	VZEROUPPER
	MOVB $1, ok+48(FP)
	RET

bad:
	VZEROUPPER
	MOVB $0, ok+48(FP)
	RET

// func sparseDotAxpyAVX2Asm(alpha float64, val *float64, idx *int32, n int, x, y *float64, bound int) (sum float64, ok bool)
TEXT ·sparseDotAxpyAVX2Asm(SB), NOSPLIT, $0-65
	VBROADCASTSD alpha+0(FP), Y8
	MOVQ         val+8(FP), SI
	MOVQ         idx+16(FP), DI
	MOVQ         n+24(FP), CX
	MOVQ         x+32(FP), DX
	MOVQ         y+40(FP), R13
	MOVQ         bound+48(FP), R8
	VXORPD       Y0, Y0, Y0
	XORQ         AX, AX
	MOVQ         CX, R9
	ANDQ         $~3, R9
	JZ           reduce

dotaxpy4:
	// x and y do not overlap, so the stores to y cannot change what the
	// gathers read from x.
	INDEX4(0)
	GATHER4(DX, X4, X5, Y4)
	VMOVUPD     (SI)(AX*8), Y6
	VFMADD231PD Y6, Y4, Y0
	VMULPD      Y6, Y8, Y6
	SCATTERADD4(R13, Y6, X6, X7, X9)
	ADDQ        $4, AX
	CMPQ        AX, R9
	JNE         dotaxpy4

reduce:
	VEXTRACTF128 $1, Y0, X1
	VADDPD       X1, X0, X0
	VPERMILPD    $1, X0, X1
	VADDSD       X1, X0, X0
	CMPQ         AX, CX
	JE           done

dotaxpy1:
	MOVLQSX     (DI)(AX*4), BX
	CMPQ        BX, R8
	JAE         bad
	VMOVSD      (SI)(AX*8), X6
	VFMADD231SD (DX)(BX*8), X6, X0
	VMULSD      X8, X6, X6
	VADDSD      (R13)(BX*8), X6, X6
	VMOVSD      X6, (R13)(BX*8)
	INCQ        AX
	CMPQ        AX, CX
	JNE         dotaxpy1

done:
	VZEROUPPER
	VMOVSD X0, sum+56(FP)
	MOVB   $1, ok+64(FP)
	RET

bad:
	VZEROUPPER
	MOVQ $0, sum+56(FP)
	MOVB $0, ok+64(FP)
	RET

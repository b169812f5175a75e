//go:build !noasm

#include "textflag.h"

// The rows kernels: sparseDotAVX2Asm's and sparseAxpyAVX2Asm's loops, row
// after row, in one call, with the macros of sparse_amd64.h.

#include "sparse_amd64.h"

// func sparseDotRowsAVX2Asm(ptr *int64, rows int, val *float64, idx *int32, x *float64, xlen int, out *float64) (ok bool)
//
// R13 walks ptr and R14 out; rows counts down in its argument slot. Each
// row is checked to have hi ≥ lo (the Go side checked ptr[0] ≥ 0 and
// ptr[rows] ≤ len(val)), and its entries are summed exactly as
// sparseDotAVX2Asm sums them, so that the bits agree with SparseDot's.
TEXT ·sparseDotRowsAVX2Asm(SB), NOSPLIT, $0-57
	MOVQ ptr+0(FP), R13
	MOVQ val+16(FP), SI
	MOVQ idx+24(FP), DI
	MOVQ x+32(FP), DX
	MOVQ xlen+40(FP), R8
	MOVQ out+48(FP), R14

row:
	MOVQ   (R13), AX
	MOVQ   8(R13), CX
	CMPQ   CX, AX
	JLT    bad
	VXORPD Y0, Y0, Y0
	VXORPD Y1, Y1, Y1
	MOVQ   CX, R9
	SUBQ   AX, R9
	ANDQ   $~7, R9
	JZ     dot4
	ADDQ   AX, R9

dot8:
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
	JE           store

dot1:
	MOVLQSX     (DI)(AX*4), BX
	CMPQ        BX, R8
	JAE         bad
	VMOVSD      (DX)(BX*8), X4
	VFMADD231SD (SI)(AX*8), X4, X0
	INCQ        AX
	CMPQ        AX, CX
	JNE         dot1

store:
	VMOVSD X0, (R14)
	ADDQ   $8, R13
	ADDQ   $8, R14
	DECQ   rows+8(FP)
	JNZ    row

	VZEROUPPER
	MOVB $1, ok+56(FP)
	RET

bad:
	VZEROUPPER
	MOVB $0, ok+56(FP)
	RET

// func sparseAxpyRowsAVX2Asm(ptr *int64, rows int, coef, val *float64, idx *int32, y *float64, ylen int) (ok bool)
//
// As sparseDotRowsAVX2Asm, R13 walks ptr and R14 coef. Every row's
// offsets are checked, a skipped row's too, so that the rows after it stay
// within val; a row whose coefficient is ±0 is then skipped. The others
// are added exactly as sparseAxpyAVX2Asm adds them.
TEXT ·sparseAxpyRowsAVX2Asm(SB), NOSPLIT, $0-57
	MOVQ ptr+0(FP), R13
	MOVQ coef+16(FP), R14
	MOVQ val+24(FP), SI
	MOVQ idx+32(FP), DI
	MOVQ y+40(FP), DX
	MOVQ ylen+48(FP), R8

arow:
	MOVQ (R13), AX
	MOVQ 8(R13), CX
	CMPQ CX, AX
	JLT  bad
	MOVQ (R14), R9
	SHLQ $1, R9         // the sign bit out: zero for ±0
	JZ   anext
	VBROADCASTSD (R14), Y8
	MOVQ         CX, R9
	SUBQ         AX, R9
	ANDQ         $~3, R9
	JZ           atail
	ADDQ         AX, R9

aaxpy4:
	INDEX4(0)
	VMULPD (SI)(AX*8), Y8, Y0
	SCATTERADD4(DX, Y0, X0, X1, X2)
	ADDQ   $4, AX
	CMPQ   AX, R9
	JNE    aaxpy4

atail:
	CMPQ AX, CX
	JE   anext

aaxpy1:
	MOVLQSX (DI)(AX*4), BX
	CMPQ    BX, R8
	JAE     bad
	VMULSD  (SI)(AX*8), X8, X0
	VADDSD  (DX)(BX*8), X0, X0
	VMOVSD  X0, (DX)(BX*8)
	INCQ    AX
	CMPQ    AX, CX
	JNE     aaxpy1

anext:
	ADDQ $8, R13
	ADDQ $8, R14
	DECQ rows+8(FP)
	JNZ  arow

	VZEROUPPER
	MOVB $1, ok+56(FP)
	RET

bad:
	VZEROUPPER
	MOVB $0, ok+56(FP)
	RET

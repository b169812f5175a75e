//go:build !noasm

#include "textflag.h"

// The lanes kernels (AVX2 + FMA) for 1, 2, 4 and 8 lanes: a dense
// element's lanes are one scalar, one vector of two, one of four or two of
// four. Each entry's value is broadcast and multiplied into its element's
// lanes by one FMA per vector. SparseDotLanes sums entry k into the k mod
// 4'th of four sets of accumulators, so that consecutive entries do not
// wait on each other, and returns (s0 + s1) + (s2 + s3): the arithmetic of
// the pure-Go twin, lane for lane. Each index is sign-extended and
// compared unsigned against the bound (rows) before the element it
// addresses is read or written.

// LANEINDEX loads idx[AX+off/4] into reg, jumps to bad unless it is below
// R8, and scales it to a byte offset by shift.
#define LANEINDEX(off, reg, shift) \
	MOVLQSX off(DI)(AX*4), reg \
	CMPQ    reg, R8            \
	JAE     bad                \
	SHLQ    $shift, reg

// DOTARGS loads the arguments of a SparseDotLanes kernel: val in SI, idx in
// DI, n in CX, v in DX, rows in R8.
#define DOTARGS \
	MOVQ val+0(FP), SI  \
	MOVQ idx+8(FP), DI  \
	MOVQ n+16(FP), CX   \
	MOVQ v+24(FP), DX   \
	MOVQ rows+32(FP), R8

// AXPYARGS loads the arguments of a SparseAxpyLanes kernel: u in R13, val
// in SI, idx in DI, n in CX, o in DX, rows in R8.
#define AXPYARGS \
	MOVQ u+0(FP), R13    \
	MOVQ val+8(FP), SI   \
	MOVQ idx+16(FP), DI  \
	MOVQ n+24(FP), CX    \
	MOVQ o+32(FP), DX    \
	MOVQ rows+40(FP), R8

// RETURNS ends a kernel: ok = true, and at the label bad, ok = false.
#define RETURNS \
	VZEROUPPER        \
	MOVB $1, ok+48(FP) \
	RET               \
bad:                  \
	VZEROUPPER        \
	MOVB $0, ok+48(FP) \
	RET

// func sparseDotLanes1Asm(val *float64, idx *int32, n int, v *float64, rows int, t *float64) (ok bool)
TEXT ·sparseDotLanes1Asm(SB), NOSPLIT, $0-49
	DOTARGS
	VXORPD X0, X0, X0
	VXORPD X1, X1, X1
	VXORPD X2, X2, X2
	VXORPD X3, X3, X3
	XORQ AX, AX
	MOVQ CX, R9
	ANDQ $~3, R9
	JZ   tail

quad:
	LANEINDEX(0, BX, 3)
	VMOVSD 0(SI)(AX*8), X4
	VFMADD231SD (DX)(BX*1), X4, X0
	LANEINDEX(4, R10, 3)
	VMOVSD 8(SI)(AX*8), X4
	VFMADD231SD (DX)(R10*1), X4, X1
	LANEINDEX(8, R11, 3)
	VMOVSD 16(SI)(AX*8), X4
	VFMADD231SD (DX)(R11*1), X4, X2
	LANEINDEX(12, R12, 3)
	VMOVSD 24(SI)(AX*8), X4
	VFMADD231SD (DX)(R12*1), X4, X3
	ADDQ $4, AX
	CMPQ AX, R9
	JNE  quad

tail:
	CMPQ AX, CX
	JE   done
	LANEINDEX(0, BX, 3)
	VMOVSD 0(SI)(AX*8), X4
	VFMADD231SD (DX)(BX*1), X4, X0
	INCQ AX
	CMPQ AX, CX
	JE   done
	LANEINDEX(0, BX, 3)
	VMOVSD 0(SI)(AX*8), X4
	VFMADD231SD (DX)(BX*1), X4, X1
	INCQ AX
	CMPQ AX, CX
	JE   done
	LANEINDEX(0, BX, 3)
	VMOVSD 0(SI)(AX*8), X4
	VFMADD231SD (DX)(BX*1), X4, X2
	INCQ AX

done:
	VADDSD X1, X0, X0
	VADDSD X3, X2, X2
	VADDSD X2, X0, X0
	MOVQ t+40(FP), R13
	VMOVSD X0, (R13)
	RETURNS

// func sparseDotLanes2Asm(val *float64, idx *int32, n int, v *float64, rows int, t *float64) (ok bool)
TEXT ·sparseDotLanes2Asm(SB), NOSPLIT, $0-49
	DOTARGS
	VXORPD X0, X0, X0
	VXORPD X1, X1, X1
	VXORPD X2, X2, X2
	VXORPD X3, X3, X3
	XORQ AX, AX
	MOVQ CX, R9
	ANDQ $~3, R9
	JZ   tail

quad:
	LANEINDEX(0, BX, 4)
	VMOVDDUP 0(SI)(AX*8), X4
	VFMADD231PD (DX)(BX*1), X4, X0
	LANEINDEX(4, R10, 4)
	VMOVDDUP 8(SI)(AX*8), X4
	VFMADD231PD (DX)(R10*1), X4, X1
	LANEINDEX(8, R11, 4)
	VMOVDDUP 16(SI)(AX*8), X4
	VFMADD231PD (DX)(R11*1), X4, X2
	LANEINDEX(12, R12, 4)
	VMOVDDUP 24(SI)(AX*8), X4
	VFMADD231PD (DX)(R12*1), X4, X3
	ADDQ $4, AX
	CMPQ AX, R9
	JNE  quad

tail:
	CMPQ AX, CX
	JE   done
	LANEINDEX(0, BX, 4)
	VMOVDDUP 0(SI)(AX*8), X4
	VFMADD231PD (DX)(BX*1), X4, X0
	INCQ AX
	CMPQ AX, CX
	JE   done
	LANEINDEX(0, BX, 4)
	VMOVDDUP 0(SI)(AX*8), X4
	VFMADD231PD (DX)(BX*1), X4, X1
	INCQ AX
	CMPQ AX, CX
	JE   done
	LANEINDEX(0, BX, 4)
	VMOVDDUP 0(SI)(AX*8), X4
	VFMADD231PD (DX)(BX*1), X4, X2
	INCQ AX

done:
	VADDPD X1, X0, X0
	VADDPD X3, X2, X2
	VADDPD X2, X0, X0
	MOVQ t+40(FP), R13
	VMOVUPD X0, (R13)
	RETURNS

// func sparseDotLanes4Asm(val *float64, idx *int32, n int, v *float64, rows int, t *float64) (ok bool)
TEXT ·sparseDotLanes4Asm(SB), NOSPLIT, $0-49
	DOTARGS
	VXORPD Y0, Y0, Y0
	VXORPD Y1, Y1, Y1
	VXORPD Y2, Y2, Y2
	VXORPD Y3, Y3, Y3
	XORQ AX, AX
	MOVQ CX, R9
	ANDQ $~3, R9
	JZ   tail

quad:
	LANEINDEX(0, BX, 5)
	VBROADCASTSD 0(SI)(AX*8), Y4
	VFMADD231PD (DX)(BX*1), Y4, Y0
	LANEINDEX(4, R10, 5)
	VBROADCASTSD 8(SI)(AX*8), Y4
	VFMADD231PD (DX)(R10*1), Y4, Y1
	LANEINDEX(8, R11, 5)
	VBROADCASTSD 16(SI)(AX*8), Y4
	VFMADD231PD (DX)(R11*1), Y4, Y2
	LANEINDEX(12, R12, 5)
	VBROADCASTSD 24(SI)(AX*8), Y4
	VFMADD231PD (DX)(R12*1), Y4, Y3
	ADDQ $4, AX
	CMPQ AX, R9
	JNE  quad

tail:
	CMPQ AX, CX
	JE   done
	LANEINDEX(0, BX, 5)
	VBROADCASTSD 0(SI)(AX*8), Y4
	VFMADD231PD (DX)(BX*1), Y4, Y0
	INCQ AX
	CMPQ AX, CX
	JE   done
	LANEINDEX(0, BX, 5)
	VBROADCASTSD 0(SI)(AX*8), Y4
	VFMADD231PD (DX)(BX*1), Y4, Y1
	INCQ AX
	CMPQ AX, CX
	JE   done
	LANEINDEX(0, BX, 5)
	VBROADCASTSD 0(SI)(AX*8), Y4
	VFMADD231PD (DX)(BX*1), Y4, Y2
	INCQ AX

done:
	VADDPD Y1, Y0, Y0
	VADDPD Y3, Y2, Y2
	VADDPD Y2, Y0, Y0
	MOVQ t+40(FP), R13
	VMOVUPD Y0, (R13)
	RETURNS

// func sparseDotLanes8Asm(val *float64, idx *int32, n int, v *float64, rows int, t *float64) (ok bool)
TEXT ·sparseDotLanes8Asm(SB), NOSPLIT, $0-49
	DOTARGS
	VXORPD Y0, Y0, Y0
	VXORPD Y8, Y8, Y8
	VXORPD Y1, Y1, Y1
	VXORPD Y9, Y9, Y9
	VXORPD Y2, Y2, Y2
	VXORPD Y10, Y10, Y10
	VXORPD Y3, Y3, Y3
	VXORPD Y11, Y11, Y11
	XORQ AX, AX
	MOVQ CX, R9
	ANDQ $~3, R9
	JZ   tail

quad:
	LANEINDEX(0, BX, 6)
	VBROADCASTSD 0(SI)(AX*8), Y4
	VFMADD231PD (DX)(BX*1), Y4, Y0
	VFMADD231PD 32(DX)(BX*1), Y4, Y8
	LANEINDEX(4, R10, 6)
	VBROADCASTSD 8(SI)(AX*8), Y4
	VFMADD231PD (DX)(R10*1), Y4, Y1
	VFMADD231PD 32(DX)(R10*1), Y4, Y9
	LANEINDEX(8, R11, 6)
	VBROADCASTSD 16(SI)(AX*8), Y4
	VFMADD231PD (DX)(R11*1), Y4, Y2
	VFMADD231PD 32(DX)(R11*1), Y4, Y10
	LANEINDEX(12, R12, 6)
	VBROADCASTSD 24(SI)(AX*8), Y4
	VFMADD231PD (DX)(R12*1), Y4, Y3
	VFMADD231PD 32(DX)(R12*1), Y4, Y11
	ADDQ $4, AX
	CMPQ AX, R9
	JNE  quad

tail:
	CMPQ AX, CX
	JE   done
	LANEINDEX(0, BX, 6)
	VBROADCASTSD 0(SI)(AX*8), Y4
	VFMADD231PD (DX)(BX*1), Y4, Y0
	VFMADD231PD 32(DX)(BX*1), Y4, Y8
	INCQ AX
	CMPQ AX, CX
	JE   done
	LANEINDEX(0, BX, 6)
	VBROADCASTSD 0(SI)(AX*8), Y4
	VFMADD231PD (DX)(BX*1), Y4, Y1
	VFMADD231PD 32(DX)(BX*1), Y4, Y9
	INCQ AX
	CMPQ AX, CX
	JE   done
	LANEINDEX(0, BX, 6)
	VBROADCASTSD 0(SI)(AX*8), Y4
	VFMADD231PD (DX)(BX*1), Y4, Y2
	VFMADD231PD 32(DX)(BX*1), Y4, Y10
	INCQ AX

done:
	VADDPD Y1, Y0, Y0
	VADDPD Y3, Y2, Y2
	VADDPD Y2, Y0, Y0
	VADDPD Y9, Y8, Y8
	VADDPD Y11, Y10, Y10
	VADDPD Y10, Y8, Y8
	MOVQ t+40(FP), R13
	VMOVUPD Y0, (R13)
	VMOVUPD Y8, 32(R13)
	RETURNS

// func sparseAxpyLanes1Asm(u, val *float64, idx *int32, n int, o *float64, rows int) (ok bool)
TEXT ·sparseAxpyLanes1Asm(SB), NOSPLIT, $0-49
	AXPYARGS
	VMOVSD (R13), X8
	XORQ  AX, AX
	TESTQ CX, CX
	JZ    done

entry:
	LANEINDEX(0, BX, 3)
	VMOVSD (SI)(AX*8), X2
	VMOVSD (DX)(BX*1), X3
	VFMADD231SD X8, X2, X3
	VMOVSD X3, (DX)(BX*1)
	INCQ AX
	CMPQ AX, CX
	JNE  entry

done:
	RETURNS

// func sparseAxpyLanes2Asm(u, val *float64, idx *int32, n int, o *float64, rows int) (ok bool)
TEXT ·sparseAxpyLanes2Asm(SB), NOSPLIT, $0-49
	AXPYARGS
	VMOVUPD (R13), X8
	XORQ  AX, AX
	TESTQ CX, CX
	JZ    done

entry:
	LANEINDEX(0, BX, 4)
	VMOVDDUP (SI)(AX*8), X2
	VMOVUPD (DX)(BX*1), X3
	VFMADD231PD X8, X2, X3
	VMOVUPD X3, (DX)(BX*1)
	INCQ AX
	CMPQ AX, CX
	JNE  entry

done:
	RETURNS

// func sparseAxpyLanes4Asm(u, val *float64, idx *int32, n int, o *float64, rows int) (ok bool)
TEXT ·sparseAxpyLanes4Asm(SB), NOSPLIT, $0-49
	AXPYARGS
	VMOVUPD (R13), Y8
	XORQ  AX, AX
	TESTQ CX, CX
	JZ    done

entry:
	LANEINDEX(0, BX, 5)
	VBROADCASTSD (SI)(AX*8), Y2
	VMOVUPD (DX)(BX*1), Y3
	VFMADD231PD Y8, Y2, Y3
	VMOVUPD Y3, (DX)(BX*1)
	INCQ AX
	CMPQ AX, CX
	JNE  entry

done:
	RETURNS

// func sparseAxpyLanes8Asm(u, val *float64, idx *int32, n int, o *float64, rows int) (ok bool)
TEXT ·sparseAxpyLanes8Asm(SB), NOSPLIT, $0-49
	AXPYARGS
	VMOVUPD (R13), Y8
	VMOVUPD 32(R13), Y9
	XORQ  AX, AX
	TESTQ CX, CX
	JZ    done

entry:
	LANEINDEX(0, BX, 6)
	VBROADCASTSD (SI)(AX*8), Y2
	VMOVUPD (DX)(BX*1), Y3
	VFMADD231PD Y8, Y2, Y3
	VMOVUPD Y3, (DX)(BX*1)
	VMOVUPD 32(DX)(BX*1), Y5
	VFMADD231PD Y9, Y2, Y5
	VMOVUPD Y5, 32(DX)(BX*1)
	INCQ AX
	CMPQ AX, CX
	JNE  entry

done:
	RETURNS

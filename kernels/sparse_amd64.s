//go:build !noasm

#include "textflag.h"

// Scalar FMA sparse kernels. Each index is sign-extended to 64 bits and
// compared unsigned against the length, which rejects negative indices as
// well; the four indices of an unrolled step are all checked before any of
// their elements is read or written.

// func sparseDotFMA(val []float64, idx []int32, x []float64) (sum float64, ok bool)
TEXT ·sparseDotFMA(SB), NOSPLIT, $0-81
	MOVQ   val_base+0(FP), SI
	MOVQ   idx_base+24(FP), DI
	MOVQ   idx_len+32(FP), CX
	MOVQ   x_base+48(FP), DX
	MOVQ   x_len+56(FP), R8
	VXORPD X0, X0, X0
	VXORPD X1, X1, X1
	VXORPD X2, X2, X2
	VXORPD X3, X3, X3
	XORQ   AX, AX
	MOVQ   CX, R9
	ANDQ   $~3, R9
	JZ     tail

loop4:
	MOVLQSX     (DI)(AX*4), BX
	MOVLQSX     4(DI)(AX*4), R10
	MOVLQSX     8(DI)(AX*4), R11
	MOVLQSX     12(DI)(AX*4), R12
	CMPQ        BX, R8
	JAE         bad
	CMPQ        R10, R8
	JAE         bad
	CMPQ        R11, R8
	JAE         bad
	CMPQ        R12, R8
	JAE         bad
	VMOVSD      (DX)(BX*8), X4
	VMOVSD      (DX)(R10*8), X5
	VMOVSD      (DX)(R11*8), X6
	VMOVSD      (DX)(R12*8), X7
	VFMADD231SD (SI)(AX*8), X4, X0
	VFMADD231SD 8(SI)(AX*8), X5, X1
	VFMADD231SD 16(SI)(AX*8), X6, X2
	VFMADD231SD 24(SI)(AX*8), X7, X3
	ADDQ        $4, AX
	CMPQ        AX, R9
	JNE         loop4

tail:
	CMPQ AX, CX
	JE   done

loop1:
	MOVLQSX     (DI)(AX*4), BX
	CMPQ        BX, R8
	JAE         bad
	VMOVSD      (DX)(BX*8), X4
	VFMADD231SD (SI)(AX*8), X4, X0
	INCQ        AX
	CMPQ        AX, CX
	JNE         loop1

done:
	VADDSD X1, X0, X0
	VADDSD X3, X2, X2
	VADDSD X2, X0, X0
	VMOVSD X0, sum+72(FP)
	MOVB   $1, ok+80(FP)
	RET

bad:
	MOVQ $0, sum+72(FP)
	MOVB $0, ok+80(FP)
	RET

// func sparseAxpyFMA(alpha float64, val []float64, idx []int32, y []float64) bool
TEXT ·sparseAxpyFMA(SB), NOSPLIT, $0-81
	VMOVSD alpha+0(FP), X8
	MOVQ   val_base+8(FP), SI
	MOVQ   idx_base+32(FP), DI
	MOVQ   idx_len+40(FP), CX
	MOVQ   y_base+56(FP), DX
	MOVQ   y_len+64(FP), R8
	XORQ   AX, AX
	MOVQ   CX, R9
	ANDQ   $~3, R9
	JZ     tail

loop4:
	MOVLQSX (DI)(AX*4), BX
	MOVLQSX 4(DI)(AX*4), R10
	MOVLQSX 8(DI)(AX*4), R11
	MOVLQSX 12(DI)(AX*4), R12
	CMPQ    BX, R8
	JAE     bad
	CMPQ    R10, R8
	JAE     bad
	CMPQ    R11, R8
	JAE     bad
	CMPQ    R12, R8
	JAE     bad

	// Each update stores before the next one loads, so a repeated index
	// sees the earlier update (through store-to-load forwarding).
	VMOVSD      (SI)(AX*8), X0
	VFMADD213SD (DX)(BX*8), X8, X0
	VMOVSD      X0, (DX)(BX*8)
	VMOVSD      8(SI)(AX*8), X1
	VFMADD213SD (DX)(R10*8), X8, X1
	VMOVSD      X1, (DX)(R10*8)
	VMOVSD      16(SI)(AX*8), X2
	VFMADD213SD (DX)(R11*8), X8, X2
	VMOVSD      X2, (DX)(R11*8)
	VMOVSD      24(SI)(AX*8), X3
	VFMADD213SD (DX)(R12*8), X8, X3
	VMOVSD      X3, (DX)(R12*8)
	ADDQ        $4, AX
	CMPQ        AX, R9
	JNE         loop4

tail:
	CMPQ AX, CX
	JE   done

loop1:
	MOVLQSX     (DI)(AX*4), BX
	CMPQ        BX, R8
	JAE         bad
	VMOVSD      (SI)(AX*8), X0
	VFMADD213SD (DX)(BX*8), X8, X0
	VMOVSD      X0, (DX)(BX*8)
	INCQ        AX
	CMPQ        AX, CX
	JNE         loop1

done:
	MOVB $1, ret+80(FP)
	RET

bad:
	MOVB $0, ret+80(FP)
	RET

// func sparseDotAxpyFMA(alpha float64, val []float64, idx []int32, x, y []float64) (sum float64, ok bool)
TEXT ·sparseDotAxpyFMA(SB), NOSPLIT, $0-113
	VMOVSD alpha+0(FP), X8
	MOVQ   val_base+8(FP), SI
	MOVQ   idx_base+32(FP), DI
	MOVQ   idx_len+40(FP), CX
	MOVQ   x_base+56(FP), DX
	MOVQ   y_base+80(FP), R13
	MOVQ   x_len+64(FP), R8
	MOVQ   y_len+88(FP), R9
	CMPQ   R9, R8
	CMOVQLT R9, R8 // R8 = min(len(x), len(y))
	VXORPD X0, X0, X0
	VXORPD X1, X1, X1
	XORQ   AX, AX
	MOVQ   CX, R9
	ANDQ   $~1, R9
	JZ     tail

loop2:
	MOVLQSX     (DI)(AX*4), BX
	MOVLQSX     4(DI)(AX*4), R10
	CMPQ        BX, R8
	JAE         bad
	CMPQ        R10, R8
	JAE         bad
	VMOVSD      (SI)(AX*8), X4
	VMOVSD      8(SI)(AX*8), X5
	VFMADD231SD (DX)(BX*8), X4, X0
	VFMADD213SD (R13)(BX*8), X8, X4
	VMOVSD      X4, (R13)(BX*8)
	VFMADD231SD (DX)(R10*8), X5, X1
	VFMADD213SD (R13)(R10*8), X8, X5
	VMOVSD      X5, (R13)(R10*8)
	ADDQ        $2, AX
	CMPQ        AX, R9
	JNE         loop2

tail:
	CMPQ AX, CX
	JE   done
	MOVLQSX     (DI)(AX*4), BX
	CMPQ        BX, R8
	JAE         bad
	VMOVSD      (SI)(AX*8), X4
	VFMADD231SD (DX)(BX*8), X4, X0
	VFMADD213SD (R13)(BX*8), X8, X4
	VMOVSD      X4, (R13)(BX*8)

done:
	VADDSD X1, X0, X0
	VMOVSD X0, sum+104(FP)
	MOVB   $1, ok+112(FP)
	RET

bad:
	MOVQ $0, sum+104(FP)
	MOVB $0, ok+112(FP)
	RET

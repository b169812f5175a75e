//go:build !noasm

#include "textflag.h"

// Dense kernels. The main loops keep four vector accumulators (or four
// vectors in flight for Axpy) so that consecutive FMAs are independent and
// both FMA pipes stay busy despite the four-cycle FMA latency.

// func dotAVX2Asm(x, y *float64, n int) float64
TEXT ·dotAVX2Asm(SB), NOSPLIT, $0-32
	MOVQ   x+0(FP), SI
	MOVQ   n+16(FP), CX
	MOVQ   y+8(FP), DI
	VXORPD Y0, Y0, Y0
	VXORPD Y1, Y1, Y1
	VXORPD Y2, Y2, Y2
	VXORPD Y3, Y3, Y3
	XORQ   AX, AX
	MOVQ   CX, DX
	ANDQ   $~15, DX // DX = elements handled by the 16-wide loop
	JZ     dot4

dot16:
	VMOVUPD     (SI)(AX*8), Y4
	VMOVUPD     32(SI)(AX*8), Y5
	VMOVUPD     64(SI)(AX*8), Y6
	VMOVUPD     96(SI)(AX*8), Y7
	VFMADD231PD (DI)(AX*8), Y4, Y0
	VFMADD231PD 32(DI)(AX*8), Y5, Y1
	VFMADD231PD 64(DI)(AX*8), Y6, Y2
	VFMADD231PD 96(DI)(AX*8), Y7, Y3
	ADDQ        $16, AX
	CMPQ        AX, DX
	JNE         dot16

dot4:
	MOVQ CX, DX
	ANDQ $~3, DX
	CMPQ AX, DX
	JE   reduce

dot4loop:
	VMOVUPD     (SI)(AX*8), Y4
	VFMADD231PD (DI)(AX*8), Y4, Y0
	ADDQ        $4, AX
	CMPQ        AX, DX
	JNE         dot4loop

reduce:
	VADDPD       Y1, Y0, Y0
	VADDPD       Y3, Y2, Y2
	VADDPD       Y2, Y0, Y0
	VEXTRACTF128 $1, Y0, X1
	VADDPD       X1, X0, X0
	VPERMILPD    $1, X0, X1
	VADDSD       X1, X0, X0
	CMPQ         AX, CX
	JE           done

dot1:
	VMOVSD      (SI)(AX*8), X1
	VFMADD231SD (DI)(AX*8), X1, X0
	INCQ        AX
	CMPQ        AX, CX
	JNE         dot1

done:
	VZEROUPPER
	VMOVSD X0, ret+24(FP)
	RET

// func axpyAVX2Asm(alpha float64, x, y *float64, n int)
TEXT ·axpyAVX2Asm(SB), NOSPLIT, $0-32
	VBROADCASTSD alpha+0(FP), Y8
	MOVQ         x+8(FP), SI
	MOVQ         n+24(FP), CX
	MOVQ         y+16(FP), DI
	XORQ         AX, AX
	MOVQ         CX, DX
	ANDQ         $~15, DX
	JZ           axpy4

axpy16:
	VMOVUPD     (SI)(AX*8), Y0
	VMOVUPD     32(SI)(AX*8), Y1
	VMOVUPD     64(SI)(AX*8), Y2
	VMOVUPD     96(SI)(AX*8), Y3
	VFMADD213PD (DI)(AX*8), Y8, Y0
	VFMADD213PD 32(DI)(AX*8), Y8, Y1
	VFMADD213PD 64(DI)(AX*8), Y8, Y2
	VFMADD213PD 96(DI)(AX*8), Y8, Y3
	VMOVUPD     Y0, (DI)(AX*8)
	VMOVUPD     Y1, 32(DI)(AX*8)
	VMOVUPD     Y2, 64(DI)(AX*8)
	VMOVUPD     Y3, 96(DI)(AX*8)
	ADDQ        $16, AX
	CMPQ        AX, DX
	JNE         axpy16

axpy4:
	MOVQ CX, DX
	ANDQ $~3, DX
	CMPQ AX, DX
	JE   axpy1

axpy4loop:
	VMOVUPD     (SI)(AX*8), Y0
	VFMADD213PD (DI)(AX*8), Y8, Y0
	VMOVUPD     Y0, (DI)(AX*8)
	ADDQ        $4, AX
	CMPQ        AX, DX
	JNE         axpy4loop

axpy1:
	CMPQ AX, CX
	JE   axpydone

axpy1loop:
	VMOVSD      (SI)(AX*8), X0
	VFMADD213SD (DI)(AX*8), X8, X0
	VMOVSD      X0, (DI)(AX*8)
	INCQ        AX
	CMPQ        AX, CX
	JNE         axpy1loop

axpydone:
	VZEROUPPER
	RET

// func dotAVX512Asm(x, y *float64, n int) float64
TEXT ·dotAVX512Asm(SB), NOSPLIT, $0-32
	MOVQ   x+0(FP), SI
	MOVQ   n+16(FP), CX
	MOVQ   y+8(FP), DI
	VPXORQ Z0, Z0, Z0
	VPXORQ Z1, Z1, Z1
	VPXORQ Z2, Z2, Z2
	VPXORQ Z3, Z3, Z3
	XORQ   AX, AX
	MOVQ   CX, DX
	ANDQ   $~31, DX
	JZ     dot8

dot32:
	VMOVUPD     (SI)(AX*8), Z4
	VMOVUPD     64(SI)(AX*8), Z5
	VMOVUPD     128(SI)(AX*8), Z6
	VMOVUPD     192(SI)(AX*8), Z7
	VFMADD231PD (DI)(AX*8), Z4, Z0
	VFMADD231PD 64(DI)(AX*8), Z5, Z1
	VFMADD231PD 128(DI)(AX*8), Z6, Z2
	VFMADD231PD 192(DI)(AX*8), Z7, Z3
	ADDQ        $32, AX
	CMPQ        AX, DX
	JNE         dot32

dot8:
	MOVQ CX, DX
	ANDQ $~7, DX
	CMPQ AX, DX
	JE   dotmask

dot8loop:
	VMOVUPD     (SI)(AX*8), Z4
	VFMADD231PD (DI)(AX*8), Z4, Z0
	ADDQ        $8, AX
	CMPQ        AX, DX
	JNE         dot8loop

dotmask:
	// The last len(x)%8 elements go through one masked FMA; masked-off
	// lanes are neither loaded nor able to fault.
	SUBQ        AX, CX
	JZ          reduce512
	MOVL        $1, BX
	SHLL        CX, BX
	DECL        BX
	KMOVW       BX, K1
	VMOVUPD.Z   (SI)(AX*8), K1, Z4
	VFMADD231PD (DI)(AX*8), Z4, K1, Z1

reduce512:
	VADDPD        Z1, Z0, Z0
	VADDPD        Z3, Z2, Z2
	VADDPD        Z2, Z0, Z0
	VEXTRACTF64X4 $1, Z0, Y1
	VADDPD        Y1, Y0, Y0
	VEXTRACTF128  $1, Y0, X1
	VADDPD        X1, X0, X0
	VPERMILPD     $1, X0, X1
	VADDSD        X1, X0, X0
	VZEROUPPER
	VMOVSD        X0, ret+24(FP)
	RET

// func axpyAVX512Asm(alpha float64, x, y *float64, n int)
TEXT ·axpyAVX512Asm(SB), NOSPLIT, $0-32
	VBROADCASTSD alpha+0(FP), Z8
	MOVQ         x+8(FP), SI
	MOVQ         n+24(FP), CX
	MOVQ         y+16(FP), DI
	XORQ         AX, AX
	MOVQ         CX, DX
	ANDQ         $~31, DX
	JZ           axpy8

axpy32:
	VMOVUPD     (SI)(AX*8), Z0
	VMOVUPD     64(SI)(AX*8), Z1
	VMOVUPD     128(SI)(AX*8), Z2
	VMOVUPD     192(SI)(AX*8), Z3
	VFMADD213PD (DI)(AX*8), Z8, Z0
	VFMADD213PD 64(DI)(AX*8), Z8, Z1
	VFMADD213PD 128(DI)(AX*8), Z8, Z2
	VFMADD213PD 192(DI)(AX*8), Z8, Z3
	VMOVUPD     Z0, (DI)(AX*8)
	VMOVUPD     Z1, 64(DI)(AX*8)
	VMOVUPD     Z2, 128(DI)(AX*8)
	VMOVUPD     Z3, 192(DI)(AX*8)
	ADDQ        $32, AX
	CMPQ        AX, DX
	JNE         axpy32

axpy8:
	MOVQ CX, DX
	ANDQ $~7, DX
	CMPQ AX, DX
	JE   axpymask

axpy8loop:
	VMOVUPD     (SI)(AX*8), Z0
	VFMADD213PD (DI)(AX*8), Z8, Z0
	VMOVUPD     Z0, (DI)(AX*8)
	ADDQ        $8, AX
	CMPQ        AX, DX
	JNE         axpy8loop

axpymask:
	SUBQ        AX, CX
	JZ          axpydone512
	MOVL        $1, BX
	SHLL        CX, BX
	DECL        BX
	KMOVW       BX, K1
	VMOVUPD.Z   (SI)(AX*8), K1, Z0
	VFMADD213PD (DI)(AX*8), Z8, K1, Z0
	VMOVUPD     Z0, K1, (DI)(AX*8)

axpydone512:
	VZEROUPPER
	RET

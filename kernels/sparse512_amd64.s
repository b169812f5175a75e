//go:build !noasm

#include "textflag.h"

// AVX-512 sparse kernels: eight entries at a time, with VGATHERDPD reading
// x[idx[k]] through the int32 indices directly and VSCATTERDPD writing y.
//
// Index check: the gather sign-extends each int32 index, so an index is
// valid exactly when, read as uint32, it is below min(len, 2³¹). One
// unsigned compare per block (VPCMPUD, predicate 1 = less-than) produces
// that validity mask; the block is only processed if the mask is full, and
// the mask then doubles as the gather mask, which the gather consumes.
//
// Repeated indices: a scatter of two lanes with the same index would keep
// only one update. VPCONFLICTD finds such lanes; a block containing any is
// updated by a scalar loop instead, in order.

// LIMIT leaves min(len, 2³¹) broadcast to the eight dwords of Y15; len is in
// R8, and R9 is clobbered.
#define LIMIT \
	MOVQ         $0x80000000, R9 \
	CMPQ         R8, R9          \
	CMOVQHI      R9, R8          \
	MOVQ         R8, X15         \
	VPBROADCASTD X15, Y15

// TAILMASK sets K4 to the low CX bits (CX in 1..7); BX is clobbered.
#define TAILMASK \
	MOVL  $1, BX  \
	SHLL  CX, BX  \
	DECL  BX      \
	KMOVB BX, K4

// func sparseDotAVX512(val []float64, idx []int32, x []float64) (sum float64, ok bool)
TEXT ·sparseDotAVX512(SB), NOSPLIT, $0-81
	MOVQ   val_base+0(FP), SI
	MOVQ   idx_base+24(FP), DI
	MOVQ   idx_len+32(FP), CX
	MOVQ   x_base+48(FP), DX
	MOVQ   x_len+56(FP), R8
	LIMIT
	VPXORQ Z0, Z0, Z0
	VPXORQ Z1, Z1, Z1
	VPXORQ Z2, Z2, Z2
	VPXORQ Z3, Z3, Z3
	XORQ   AX, AX
	MOVQ   CX, R9
	ANDQ   $~15, R9
	JZ     block8

loop16:
	VMOVDQU     (DI)(AX*4), Y4
	VMOVDQU     32(DI)(AX*4), Y5
	VPCMPUD     $1, Y15, Y4, K1
	VPCMPUD     $1, Y15, Y5, K2
	KANDB       K1, K2, K3
	KORTESTB    K3, K3
	JCC         bad                    // CF is set only if all bits of K3 are
	VPXORQ      Z6, Z6, Z6             // break the gather's dependency on Z6
	VPXORQ      Z7, Z7, Z7
	VGATHERDPD  (DX)(Y4*8), K1, Z6
	VGATHERDPD  (DX)(Y5*8), K2, Z7
	VFMADD231PD (SI)(AX*8), Z6, Z0
	VFMADD231PD 64(SI)(AX*8), Z7, Z1
	ADDQ        $16, AX
	CMPQ        AX, R9
	JNE         loop16

block8:
	MOVQ        CX, R9
	ANDQ        $~7, R9
	CMPQ        AX, R9
	JE          tail
	VMOVDQU     (DI)(AX*4), Y4
	VPCMPUD     $1, Y15, Y4, K1
	KORTESTB    K1, K1
	JCC         bad
	VPXORQ      Z6, Z6, Z6
	VGATHERDPD  (DX)(Y4*8), K1, Z6
	VFMADD231PD (SI)(AX*8), Z6, Z2
	ADDQ        $8, AX

tail:
	SUBQ        AX, CX
	JZ          reduce
	TAILMASK
	VMOVDQU32.Z (DI)(AX*4), K4, Y4
	VPCMPUD     $1, Y15, Y4, K4, K1
	KXORB       K1, K4, K2
	KORTESTB    K2, K2
	JNE         bad
	VPXORQ      Z6, Z6, Z6
	VGATHERDPD  (DX)(Y4*8), K1, Z6
	VFMADD231PD (SI)(AX*8), Z6, K4, Z3

reduce:
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
	VMOVSD        X0, sum+72(FP)
	MOVB          $1, ok+80(FP)
	RET

bad:
	VZEROUPPER
	MOVQ $0, sum+72(FP)
	MOVB $0, ok+80(FP)
	RET

// func sparseAxpyAVX512(alpha float64, val []float64, idx []int32, y []float64) bool
TEXT ·sparseAxpyAVX512(SB), NOSPLIT, $0-81
	VBROADCASTSD alpha+0(FP), Z14
	MOVQ         val_base+8(FP), SI
	MOVQ         idx_base+32(FP), DI
	MOVQ         idx_len+40(FP), CX
	MOVQ         y_base+56(FP), DX
	MOVQ         y_len+64(FP), R8
	LIMIT
	XORQ         AX, AX
	MOVQ         CX, R9
	ANDQ         $~7, R9
	JZ           tail

loop8:
	VMOVDQU     (DI)(AX*4), Y4
	VPCMPUD     $1, Y15, Y4, K1
	KORTESTB    K1, K1
	JCC         bad
	VPCONFLICTD Y4, Y5
	VPTEST      Y5, Y5
	JNE         conflict8
	KMOVB       K1, K2
	VPXORQ      Z6, Z6, Z6
	VGATHERDPD  (DX)(Y4*8), K1, Z6
	VFMADD231PD (SI)(AX*8), Z14, Z6
	VSCATTERDPD Z6, K2, (DX)(Y4*8)

next8:
	ADDQ $8, AX
	CMPQ AX, R9
	JNE  loop8

tail:
	SUBQ          AX, CX
	JZ            done
	TAILMASK
	VMOVDQU32.Z   (DI)(AX*4), K4, Y4
	VPCMPUD       $1, Y15, Y4, K4, K1
	KXORB         K1, K4, K2
	KORTESTB      K2, K2
	JNE           bad
	VPCONFLICTD.Z Y4, K4, Y5           // masked-off lanes must not look like repeats
	VPTEST        Y5, Y5
	JNE           conflicttail
	KMOVB         K1, K2
	VPXORQ        Z6, Z6, Z6
	VGATHERDPD    (DX)(Y4*8), K1, Z6
	VFMADD231PD   (SI)(AX*8), Z14, K4, Z6
	VSCATTERDPD   Z6, K2, (DX)(Y4*8)

done:
	VZEROUPPER
	MOVB $1, ret+80(FP)
	RET

bad:
	VZEROUPPER
	MOVB $0, ret+80(FP)
	RET

conflict8:
	// The block's indices are valid; update its eight entries in order.
	MOVQ AX, R10
	LEAQ 8(AX), R11

conflict8loop:
	MOVLQSX     (DI)(R10*4), BX
	VMOVSD      (SI)(R10*8), X0
	VFMADD213SD (DX)(BX*8), X14, X0
	VMOVSD      X0, (DX)(BX*8)
	INCQ        R10
	CMPQ        R10, R11
	JNE         conflict8loop
	JMP         next8

conflicttail:
	ADDQ AX, CX

conflicttailloop:
	MOVLQSX     (DI)(AX*4), BX
	VMOVSD      (SI)(AX*8), X0
	VFMADD213SD (DX)(BX*8), X14, X0
	VMOVSD      X0, (DX)(BX*8)
	INCQ        AX
	CMPQ        AX, CX
	JNE         conflicttailloop
	JMP         done

// func sparseDotAxpyAVX512(alpha float64, val []float64, idx []int32, x, y []float64) (sum float64, ok bool)
TEXT ·sparseDotAxpyAVX512(SB), NOSPLIT, $0-113
	VBROADCASTSD alpha+0(FP), Z14
	MOVQ         val_base+8(FP), SI
	MOVQ         idx_base+32(FP), DI
	MOVQ         idx_len+40(FP), CX
	MOVQ         x_base+56(FP), DX
	MOVQ         y_base+80(FP), R13
	MOVQ         x_len+64(FP), R8
	MOVQ         y_len+88(FP), R9
	CMPQ         R9, R8
	CMOVQLT      R9, R8                 // R8 = min(len(x), len(y))
	LIMIT
	VPXORQ       Z0, Z0, Z0
	VPXORQ       Z1, Z1, Z1
	XORQ         AX, AX
	MOVQ         CX, R9
	ANDQ         $~7, R9
	JZ           tail

loop8:
	VMOVUPD     (SI)(AX*8), Z8
	VMOVDQU     (DI)(AX*4), Y4
	VPCMPUD     $1, Y15, Y4, K1
	KORTESTB    K1, K1
	JCC         bad
	KMOVB       K1, K2
	VPXORQ      Z6, Z6, Z6
	VGATHERDPD  (DX)(Y4*8), K2, Z6
	VFMADD231PD Z8, Z6, Z0
	VPCONFLICTD Y4, Y5
	VPTEST      Y5, Y5
	JNE         conflict8
	KMOVB       K1, K2
	VPXORQ      Z7, Z7, Z7
	VGATHERDPD  (R13)(Y4*8), K1, Z7
	VFMADD231PD Z14, Z8, Z7
	VSCATTERDPD Z7, K2, (R13)(Y4*8)

next8:
	ADDQ $8, AX
	CMPQ AX, R9
	JNE  loop8

tail:
	SUBQ          AX, CX
	JZ            reduce
	TAILMASK
	VMOVUPD.Z     (SI)(AX*8), K4, Z8
	VMOVDQU32.Z   (DI)(AX*4), K4, Y4
	VPCMPUD       $1, Y15, Y4, K4, K1
	KXORB         K1, K4, K2
	KORTESTB      K2, K2
	JNE           bad
	KMOVB         K1, K2
	VPXORQ        Z6, Z6, Z6
	VGATHERDPD    (DX)(Y4*8), K2, Z6
	VFMADD231PD   Z8, Z6, Z1
	VPCONFLICTD.Z Y4, K4, Y5
	VPTEST        Y5, Y5
	JNE           conflicttail
	KMOVB         K1, K2
	VPXORQ        Z7, Z7, Z7
	VGATHERDPD    (R13)(Y4*8), K1, Z7
	VFMADD231PD   Z14, Z8, Z7
	VSCATTERDPD   Z7, K2, (R13)(Y4*8)

reduce:
	VADDPD        Z1, Z0, Z0
	VEXTRACTF64X4 $1, Z0, Y1
	VADDPD        Y1, Y0, Y0
	VEXTRACTF128  $1, Y0, X1
	VADDPD        X1, X0, X0
	VPERMILPD     $1, X0, X1
	VADDSD        X1, X0, X0
	VZEROUPPER
	VMOVSD        X0, sum+104(FP)
	MOVB          $1, ok+112(FP)
	RET

bad:
	VZEROUPPER
	MOVQ $0, sum+104(FP)
	MOVB $0, ok+112(FP)
	RET

conflict8:
	MOVQ AX, R10
	LEAQ 8(AX), R11

conflict8loop:
	MOVLQSX     (DI)(R10*4), BX
	VMOVSD      (SI)(R10*8), X7
	VFMADD213SD (R13)(BX*8), X14, X7
	VMOVSD      X7, (R13)(BX*8)
	INCQ        R10
	CMPQ        R10, R11
	JNE         conflict8loop
	JMP         next8

conflicttail:
	ADDQ AX, CX

conflicttailloop:
	MOVLQSX     (DI)(AX*4), BX
	VMOVSD      (SI)(AX*8), X7
	VFMADD213SD (R13)(BX*8), X14, X7
	VMOVSD      X7, (R13)(BX*8)
	INCQ        AX
	CMPQ        AX, CX
	JNE         conflicttailloop
	JMP         reduce

//go:build !noasm

#include "textflag.h"

// The 4×4 tile kernel keeps the sixteen sums in Z0–Z15, one per pair of
// rows, eight elements per lane, and the eight rows' current vectors in
// Z16–Z23: eight loads feed sixteen FMAs.

#define TILE_FMAS \
	VFMADD231PD Z20, Z16, Z0  \
	VFMADD231PD Z21, Z16, Z1  \
	VFMADD231PD Z22, Z16, Z2  \
	VFMADD231PD Z23, Z16, Z3  \
	VFMADD231PD Z20, Z17, Z4  \
	VFMADD231PD Z21, Z17, Z5  \
	VFMADD231PD Z22, Z17, Z6  \
	VFMADD231PD Z23, Z17, Z7  \
	VFMADD231PD Z20, Z18, Z8  \
	VFMADD231PD Z21, Z18, Z9  \
	VFMADD231PD Z22, Z18, Z10 \
	VFMADD231PD Z23, Z18, Z11 \
	VFMADD231PD Z20, Z19, Z12 \
	VFMADD231PD Z21, Z19, Z13 \
	VFMADD231PD Z22, Z19, Z14 \
	VFMADD231PD Z23, Z19, Z15

// TILE_REDUCE sums the eight lanes of Z into X's low element, with Z15 as
// scratch, and stores it at off(R8).
#define TILE_REDUCE(Z, Y, X, off) \
	VEXTRACTF64X4 $1, Z, Y15 \
	VADDPD        Y15, Y, Y  \
	VEXTRACTF128  $1, Y, X15 \
	VADDPD        X15, X, X  \
	VPERMILPD     $1, X, X15 \
	VADDSD        X15, X, X  \
	VMOVSD        X, off(R8)

// func dotTile4AVX512Asm(dst *[16]float64, a *float64, lda int, b *float64, ldb int, k int)
TEXT ·dotTile4AVX512Asm(SB), NOSPLIT, $0-48
	MOVQ a+8(FP), SI
	MOVQ lda+16(FP), AX
	LEAQ (SI)(AX*8), R9
	LEAQ (R9)(AX*8), R10
	LEAQ (R10)(AX*8), R11
	MOVQ b+24(FP), DI
	MOVQ ldb+32(FP), AX
	LEAQ (DI)(AX*8), R12
	LEAQ (R12)(AX*8), R13
	LEAQ (R13)(AX*8), BX
	MOVQ k+40(FP), CX
	VPXORQ Z0, Z0, Z0
	VPXORQ Z1, Z1, Z1
	VPXORQ Z2, Z2, Z2
	VPXORQ Z3, Z3, Z3
	VPXORQ Z4, Z4, Z4
	VPXORQ Z5, Z5, Z5
	VPXORQ Z6, Z6, Z6
	VPXORQ Z7, Z7, Z7
	VPXORQ Z8, Z8, Z8
	VPXORQ Z9, Z9, Z9
	VPXORQ Z10, Z10, Z10
	VPXORQ Z11, Z11, Z11
	VPXORQ Z12, Z12, Z12
	VPXORQ Z13, Z13, Z13
	VPXORQ Z14, Z14, Z14
	VPXORQ Z15, Z15, Z15
	XORQ   AX, AX
	MOVQ   CX, DX
	ANDQ   $~7, DX
	JZ     tilemask

tile8:
	VMOVUPD (SI)(AX*8), Z16
	VMOVUPD (R9)(AX*8), Z17
	VMOVUPD (R10)(AX*8), Z18
	VMOVUPD (R11)(AX*8), Z19
	VMOVUPD (DI)(AX*8), Z20
	VMOVUPD (R12)(AX*8), Z21
	VMOVUPD (R13)(AX*8), Z22
	VMOVUPD (BX)(AX*8), Z23
	TILE_FMAS
	ADDQ    $8, AX
	CMPQ    AX, DX
	JNE     tile8

tilemask:
	// The last k%8 elements through masked loads, which zero the lanes
	// they leave out and cannot fault there.
	SUBQ      AX, CX
	JZ        tilereduce
	MOVL      $1, DX
	SHLL      CX, DX
	DECL      DX
	KMOVW     DX, K1
	VMOVUPD.Z (SI)(AX*8), K1, Z16
	VMOVUPD.Z (R9)(AX*8), K1, Z17
	VMOVUPD.Z (R10)(AX*8), K1, Z18
	VMOVUPD.Z (R11)(AX*8), K1, Z19
	VMOVUPD.Z (DI)(AX*8), K1, Z20
	VMOVUPD.Z (R12)(AX*8), K1, Z21
	VMOVUPD.Z (R13)(AX*8), K1, Z22
	VMOVUPD.Z (BX)(AX*8), K1, Z23
	TILE_FMAS

tilereduce:
	MOVQ    dst+0(FP), R8
	VMOVAPD Z15, Z16
	TILE_REDUCE(Z0, Y0, X0, 0)
	TILE_REDUCE(Z1, Y1, X1, 8)
	TILE_REDUCE(Z2, Y2, X2, 16)
	TILE_REDUCE(Z3, Y3, X3, 24)
	TILE_REDUCE(Z4, Y4, X4, 32)
	TILE_REDUCE(Z5, Y5, X5, 40)
	TILE_REDUCE(Z6, Y6, X6, 48)
	TILE_REDUCE(Z7, Y7, X7, 56)
	TILE_REDUCE(Z8, Y8, X8, 64)
	TILE_REDUCE(Z9, Y9, X9, 72)
	TILE_REDUCE(Z10, Y10, X10, 80)
	TILE_REDUCE(Z11, Y11, X11, 88)
	TILE_REDUCE(Z12, Y12, X12, 96)
	TILE_REDUCE(Z13, Y13, X13, 104)
	TILE_REDUCE(Z14, Y14, X14, 112)
	VMOVAPD Z16, Z0
	TILE_REDUCE(Z0, Y0, X0, 120)
	VZEROUPPER
	RET

// The macros of the sparse kernels' assembly, shared by sparse_amd64.s and
// rows_amd64.s: an index check and the scalar loads and stores that stand
// in for a gather and a scatter (see sparse_amd64.s).

// INDEX4 loads the four indices at off(DI)(AX*4) into R10, BX, R12 and R11
// (in that order) and jumps to bad unless each is below R8.
#define INDEX4(off) \
	MOVQ    off(DI)(AX*4), BX   \
	MOVQ    off+8(DI)(AX*4), R11 \
	MOVLQSX BX, R10             \
	SARQ    $32, BX             \
	MOVLQSX R11, R12            \
	SARQ    $32, R11            \
	CMPQ    R10, R8             \
	JAE     bad                 \
	CMPQ    BX, R8              \
	JAE     bad                 \
	CMPQ    R12, R8             \
	JAE     bad                 \
	CMPQ    R11, R8             \
	JAE     bad

// GATHER4 loads x[R10], x[BX], x[R12], x[R11] (x at base) into the lanes of
// ylo, using xhi as scratch; xlo is the low half of ylo.
#define GATHER4(base, xlo, xhi, ylo) \
	VMOVSD      (base)(R10*8), xlo       \
	VMOVHPD     (base)(BX*8), xlo, xlo   \
	VMOVSD      (base)(R12*8), xhi       \
	VMOVHPD     (base)(R11*8), xhi, xhi  \
	VINSERTF128 $1, xhi, ylo, ylo

// SCATTERADD4 adds the four lanes of yv to y[R10], y[BX], y[R12], y[R11]
// (y at base), one after the other; xv is the low half of yv, xhi and xt are
// scratch. yv is clobbered.
#define SCATTERADD4(base, yv, xv, xhi, xt) \
	VEXTRACTF128 $1, yv, xhi              \
	VADDSD       (base)(R10*8), xv, xt    \
	VMOVSD       xt, (base)(R10*8)        \
	VPERMILPD    $1, xv, xv               \
	VADDSD       (base)(BX*8), xv, xt     \
	VMOVSD       xt, (base)(BX*8)         \
	VADDSD       (base)(R12*8), xhi, xt   \
	VMOVSD       xt, (base)(R12*8)        \
	VPERMILPD    $1, xhi, xhi             \
	VADDSD       (base)(R11*8), xhi, xt   \
	VMOVSD       xt, (base)(R11*8)

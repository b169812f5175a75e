package newton

import (
	"sync"

	"github.com/adaspdc/adaspdc/engine/driver"
	"github.com/adaspdc/adaspdc/internal/hugepage"
	"github.com/adaspdc/adaspdc/kernels"
	"github.com/adaspdc/adaspdc/sparse"
)

// Settings are the Newton family's own settings, which Options.Settings
// carries to newton; the other solvers refuse them.
type Settings struct {
	// Products, when not nil, takes this run's products with the data part
	// of the Hessian in the same sweeps as those of the other newton runs
	// on the same X that share it (one-vs-rest's classes): see Products.
	// It changes no iterate, only how the products are swept.
	Products *Products
}

// Family is the Newton family's name, as SolverInfo.Reads lists it.
const Family = "newton"

// Family returns the Newton family's name.
func (Settings) Family() string { return Family }

// IsDefault reports whether the run takes its products alone.
func (s Settings) IsDefault() bool { return s.Products == nil }

// Validate accepts any settings.
func (Settings) Validate() error { return nil }

// ProductLanes is the most runs a Products serves at a time; a run that
// would be one more takes its products alone.
const ProductLanes = 8

// Products takes the Hessian products and the margins of several newton
// runs on the same data, each with its own vector v and curvatures
// cₖ = φ″(zₖ)/n, in one sweep over the rows:
//
//	outᵩ = Σₖ cₖᵩ (aₖᵀvᵩ) aₖ,   or   zᵩₖ = aₖᵀvᵩ,   for every run q of the sweep.
//
// The runs' vectors are interleaved in W lanes, v[j·W + q] = vᵩ[j], so that
// a nonzero aₖⱼ costs one read of its index and value and then W
// multiply-adds on W adjacent values (one cache line at W = 8), where W
// separate sweeps would each read the row and gather vᵩ[j] on their own.
// On one-vs-rest's wide data (news20's 20 classes) these sweeps are most
// of the run.
//
// Each run calls Times or Margins where it would sweep the rows. The call
// waits until every run that has joined and not left, and is not away,
// waits in a call too; the last to arrive sweeps for all of them on the
// Products' workers. Between two calls a run does O(d) vector work, so the
// waits are short, or the rest of its gradient's sweep, on its own, during
// which it is away and the others' sweeps go on. A lane's arithmetic
// depends neither on the other lanes nor on how many there are, so a run's
// iterates are the same bits whichever runs share its sweeps (and, with
// Options.Deterministic, from run to run).
type Products struct {
	x     *sparse.CSR
	sweep *driver.RowSweep

	mu      sync.Mutex
	swept   *sync.Cond     // a sweep has ended
	live    int            // runs that have joined and not left
	absent  int            // live runs in a sweep of their own (away)
	pending []*productCall // the calls waiting for the next sweep
	err     error          // the first sweep's error: every later call returns it

	// Only the sweeping goroutine touches these, one sweep at a time: a
	// sweep takes every live run's call, so no other can start before it
	// ends.
	calls   []*productCall
	v, c, o []float64 // the lanes, interleaved: v[j·W+q], c[k·W+q], o[j·W+q]
}

// productCall is one run's call: a product (curv, v, out) or margins
// (v, z).
type productCall struct {
	curv, v, out, z []float64
	done            bool // the sweep serving the call has ended
}

// NewProducts returns a Products for newton runs on x, sweeping on threads
// workers; deterministic makes the sweeps static (chunk w is worker w's),
// as Options.Deterministic asks. Close stops the workers.
func NewProducts(x *sparse.CSR, threads int, deterministic bool) *Products {
	p := &Products{x: x, sweep: driver.NewRowSweep(x, driver.SweepWorkers(x, threads), !deterministic)}
	p.swept = sync.NewCond(&p.mu)
	return p
}

// Close stops the workers. No run may be joined.
func (p *Products) Close() error { return p.sweep.Close() }

// SharesProducts reports whether newton runs on x should share their
// sweeps through a Products: where they take their Hessian products by
// sweeps over the rows (they do not form the Hessian), and a sweep is
// long enough (driver.SweepMinNNZ) that the hand-off between runs, a lock
// and a wake-up per call, does not matter.
func SharesProducts(x *sparse.CSR) bool {
	return x.NNZ() >= driver.SweepMinNNZ && !denseHessianPaysAt(int64(x.Cols), x.NNZ(), hessianBuildCost(x))
}

// join adds a run on x, and reports whether it was added: not when the
// data differ or ProductLanes runs are joined already.
func (p *Products) join(x *sparse.CSR) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if x != p.x || p.live == ProductLanes {
		return false
	}
	p.live++
	return true
}

// leave removes a run; the others' calls then wait for one run fewer.
func (p *Products) leave() {
	p.mu.Lock()
	p.live--
	p.sweepIfAll() // unlocks
}

// away tells p that the run is starting a sweep of its own (the rest of
// its gradient's), so that the others' calls need not wait for it; back
// tells it that the run may call again. Either is a no-op on a nil p.
func (p *Products) away() {
	if p == nil {
		return
	}
	p.mu.Lock()
	p.absent++
	p.sweepIfAll() // unlocks
}

func (p *Products) back() {
	if p == nil {
		return
	}
	p.mu.Lock()
	p.absent--
	p.mu.Unlock()
}

// Times sets out = Σₖ curvₖ (aₖᵀv) aₖ, in a sweep shared with the other
// runs joined (see Products). v and out have X.Cols entries, curv X.Rows;
// none may change until Times returns.
func (p *Products) Times(curv, v, out []float64) error {
	return p.call(&productCall{curv: curv, v: v, out: out})
}

// Margins sets zₖ = aₖᵀv for every row k, in a sweep shared with the other
// runs joined. v has X.Cols entries, z X.Rows.
func (p *Products) Margins(v, z []float64) error {
	return p.call(&productCall{v: v, z: z})
}

func (p *Products) call(call *productCall) error {
	p.mu.Lock()
	p.pending = append(p.pending, call)
	p.sweepIfAll() // unlocks
	p.mu.Lock()
	for !call.done {
		p.swept.Wait()
	}
	err := p.err
	p.mu.Unlock()
	return err
}

// sweepIfAll sweeps for the pending calls if every live run has one, and
// unlocks p.mu (held on entry).
func (p *Products) sweepIfAll() {
	if len(p.pending) == 0 || len(p.pending) < p.live-p.absent {
		p.mu.Unlock()
		return
	}
	p.calls, p.pending = p.pending, p.calls[:0]
	err := p.err
	p.mu.Unlock()
	if err == nil {
		err = p.run()
	}
	p.mu.Lock()
	if p.err == nil {
		p.err = err
	}
	for _, c := range p.calls {
		c.done = true
	}
	p.swept.Broadcast()
	p.mu.Unlock()
}

// run sweeps the rows for p.calls.
func (p *Products) run() error {
	x, calls := p.x, p.calls
	d, n := x.Cols, x.Rows
	var z [ProductLanes][]float64 // the margins calls' outputs, by lane
	products := false
	for q, call := range calls {
		z[q] = call.z
		products = products || call.out != nil
	}
	var v, c, o []float64
	w := 1
	if len(calls) == 1 {
		// The lone run's lane, summed as in a shared sweep, so that its
		// iterates do not depend on its company.
		v, c, o = calls[0].v, calls[0].curv, calls[0].out
	} else {
		for w < len(calls) {
			w *= 2
		}
		if len(p.v) < d*w {
			p.v, p.o = hugepage.Make[float64](d*w), hugepage.Make[float64](d*w)
		}
		if len(p.c) < n*w {
			p.c = hugepage.Make[float64](n * w)
		}
		v, c, o = p.v[:d*w], p.c[:n*w], p.o[:d*w]
		if !products {
			c, o = nil, nil
		}
		t := p.sweep.Threads()
		err := p.sweep.Pool().Run(func(wk int) {
			lo, hi := driver.CoordRange(d, wk, t)
			interleave(v, w, lo, hi, calls, func(c *productCall) []float64 { return c.v })
			if c != nil {
				lo, hi = driver.CoordRange(n, wk, t)
				interleave(c, w, lo, hi, calls, func(c *productCall) []float64 { return c.curv })
			}
		})
		if err != nil {
			return err
		}
	}
	rows := func(_, lo, hi int, acc [][]float64) {
		var o []float64
		if len(acc) > 0 {
			o = acc[0]
		}
		productRows(x, w, lo, hi, v, c, o, &z)
	}
	if !products {
		return p.sweep.RunThen(rows, nil)
	}
	if w == 1 {
		return p.sweep.RunThen(rows, nil, o)
	}
	return p.sweep.RunThen(rows, func(_, lo, hi int) {
		// lo is a multiple of 8 (CoordRange), so of w, and hi is one or d·w.
		var out [ProductLanes][]float64
		for q, call := range calls {
			if call.out != nil {
				out[q] = call.out[:hi/w]
			}
		}
		for j := lo / w; j < hi/w; j++ {
			oj := o[j*w : j*w+len(calls)]
			for q, x := range oj {
				if out[q] != nil {
					out[q][j] = x
				}
			}
		}
	}, o)
}

// interleave sets lane q of dst (W = w lanes), entries lo:hi, to
// of(calls[q]), and the other lanes (past the calls, or where of gives
// nil) to zero: element by element, so that dst is written in order.
func interleave(dst []float64, w, lo, hi int, calls []*productCall, of func(*productCall) []float64) {
	var src [ProductLanes][]float64
	for q, c := range calls {
		if s := of(c); s != nil {
			src[q] = s[:hi]
		}
	}
	for j := lo; j < hi; j++ {
		dj := dst[j*w : j*w+w]
		for q, s := range src[:w] {
			if s != nil {
				dj[q] = s[j]
			} else {
				dj[q] = 0
			}
		}
	}
}

// productRows takes, for each row k of lo:hi, the margins tᵩ = aₖᵀvᵩ of
// v's lanes, stores those of the lanes with a z, and adds Σᵩ c[k·w+q]·tᵩ·aₖ
// into o's lanes (none where c is nil), v's, c's and o's lanes interleaved
// w wide (kernels' SparseDotLanes and SparseAxpyLanes, whose lanes do not
// depend on w).
func productRows(x *sparse.CSR, w, lo, hi int, v, c, o []float64, z *[ProductLanes][]float64) {
	var buf [ProductLanes]float64
	t := buf[:w]
	margins := false
	for _, zq := range z[:w] {
		margins = margins || zq != nil
	}
	for k := lo; k < hi; k++ {
		var ck []float64
		if c != nil {
			ck = c[k*w : k*w+w]
			zero := true
			for _, x := range ck {
				zero = zero && x == 0
			}
			if zero {
				ck = nil
			}
		}
		if ck == nil && !margins {
			continue
		}
		val, idx := x.Row(k)
		kernels.SparseDotLanes(val, idx, v, t)
		if margins {
			for q, zq := range z[:w] {
				if zq != nil {
					zq[k] = t[q]
				}
			}
		}
		if ck != nil {
			for q, x := range ck {
				t[q] *= x
			}
			kernels.SparseAxpyLanes(t, val, idx, o)
		}
	}
}

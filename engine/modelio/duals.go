package modelio

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"math"
	"os"
	"sync"
	"unsafe"

	"github.com/adaspdc/adaspdc/engine"
)

// Duals is a dual iterate kept beside a model: one dual per row of the
// problem the model was trained on. A dual method (the SDCA family)
// restarted from a model's weights alone starts from the duals paired with
// them, yₖ = φ′(aₖᵀw), whose v = (1/n) Σₖ yₖaₖ is not −λw away from the
// optimum, so its first certificates can be far worse than the one that
// made the model the run's best; restarted from these duals
// (engine.SDCASettings.WarmDuals), it continues where it stopped.
//
// The checksums tie the duals to their rows and to their model: duals of
// other rows, or of an older model whose file has since been replaced,
// are no warm start for this one.
type Duals struct {
	Loss    string    // the loss's name (engine.Loss.Name)
	Data    uint64    // DataSum of the problem the duals belong to
	Weights uint32    // WeightsSum of the model's weights, as the model file holds them
	Y       []float64 // one dual per row, in the rows' order
}

// dualsMagic begins a file of SaveDuals; the byte after it is the format's
// version.
const dualsMagic = "adaspdc duals\n"

const dualsVersion = 1

// dualsCRC returns the table of the checksums: Castagnoli's polynomial,
// which the processor computes where it can (SSE 4.2, ARMv8). It is made
// on first use, not at start-up, where building it (the folding constants
// of the SSE 4.2 path) was the largest part of every process's
// initialisation after the CPU's detection.
var dualsCRC = sync.OnceValue(func() *crc32.Table { return crc32.MakeTable(crc32.Castagnoli) })

// SaveDuals writes d to path atomically (WriteFileAtomic), in a binary
// form: the magic line and version, the loss's name, the two checksums,
// the number of duals and the duals, little-endian, and a CRC-32C of all
// of it, so that LoadDuals refuses a file cut short or changed.
func SaveDuals(path string, d *Duals) error {
	return WriteFileAtomic(path, func(w io.Writer) error {
		h := crc32.New(dualsCRC())
		bw := bufio.NewWriterSize(io.MultiWriter(w, h), 1<<16)
		var head []byte
		head = append(head, dualsMagic...)
		head = append(head, dualsVersion)
		head = binary.LittleEndian.AppendUint32(head, uint32(len(d.Loss)))
		head = append(head, d.Loss...)
		head = binary.LittleEndian.AppendUint64(head, d.Data)
		head = binary.LittleEndian.AppendUint32(head, d.Weights)
		head = binary.LittleEndian.AppendUint64(head, uint64(len(d.Y)))
		if _, err := bw.Write(head); err != nil {
			return err
		}
		var buf [8]byte
		for _, y := range d.Y {
			binary.LittleEndian.PutUint64(buf[:], math.Float64bits(y))
			if _, err := bw.Write(buf[:]); err != nil {
				return err
			}
		}
		if err := bw.Flush(); err != nil {
			return err
		}
		_, err := w.Write(binary.LittleEndian.AppendUint32(nil, h.Sum32()))
		return err
	})
}

// ErrNoDuals is LoadDuals' error where path does not exist.
var ErrNoDuals = errors.New("no duals file")

// LoadDuals reads a file of SaveDuals. It refuses, with an error that
// names the file, one that is not of SaveDuals, of another version, cut
// short, longer than its duals, or whose checksum does not match; a path
// that does not exist gives an error that wraps ErrNoDuals.
func LoadDuals(path string) (*Duals, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("%s: %w", path, ErrNoDuals)
	}
	if err != nil {
		return nil, err
	}
	return parseDuals(data, path)
}

// parseDuals is LoadDuals on the file's bytes; path names it in errors.
func parseDuals(data []byte, path string) (*Duals, error) {
	bad := func(why string) (*Duals, error) {
		return nil, fmt.Errorf("%s: %s", path, why)
	}
	if len(data) < len(dualsMagic)+1+4 || string(data[:len(dualsMagic)]) != dualsMagic {
		return bad("not a duals file (modelio.SaveDuals): no magic line")
	}
	if v := data[len(dualsMagic)]; v != dualsVersion {
		return bad(fmt.Sprintf("a duals file of version %d; this build reads version %d", v, dualsVersion))
	}
	body, sum := data[:len(data)-4], binary.LittleEndian.Uint32(data[len(data)-4:])
	if crc32.Checksum(body, dualsCRC()) != sum {
		return bad("the duals file's checksum does not match: it was cut short or changed")
	}
	rest := body[len(dualsMagic)+1:]
	var d Duals
	if len(rest) < 4 {
		return bad("the duals file is cut short")
	}
	nameLen := uint64(binary.LittleEndian.Uint32(rest))
	rest = rest[4:]
	if uint64(len(rest)) < nameLen+20 {
		return bad("the duals file is cut short")
	}
	d.Loss, rest = string(rest[:nameLen]), rest[nameLen:]
	d.Data, d.Weights = binary.LittleEndian.Uint64(rest), binary.LittleEndian.Uint32(rest[8:])
	n := binary.LittleEndian.Uint64(rest[12:])
	rest = rest[20:]
	if n > uint64(len(rest))/8 || uint64(len(rest)) != 8*n {
		return bad(fmt.Sprintf("the duals file announces %d duals and holds %d bytes of them", n, len(rest)))
	}
	d.Y = make([]float64, n)
	for k := range d.Y {
		d.Y[k] = math.Float64frombits(binary.LittleEndian.Uint64(rest[8*k:]))
	}
	return &d, nil
}

// DataSum returns a checksum of what a dual iterate belongs to: the rows
// (their columns and values), the labels and the row weights, in the
// rows' order, and the shape. It is FinishDataSum of RowsSum over all
// rows, so that the ranks of a distributed run, each with its share of
// the rows, find the same sum as one process with all of them. Two
// problems with equal sums have, but for a collision, the same dual
// problem up to λ and l1, which do not change a dual's domain: a dual
// iterate of one is a warm start of the other. It reads the data once.
func DataSum(p engine.Problem) uint64 {
	return FinishDataSum(RowsSum(p, 0), int64(p.X.Rows), p.X.Cols)
}

// RowsSum returns the rows' part of DataSum for the rows of p numbered
// from first on: the sum, modulo 2⁶⁴, of each row's CRC-32C (of its label,
// its weight where there are weights, its columns and its values, as this
// machine holds them in memory) mixed with the row's number. The parts of
// the rows' shares add up to the part of all of them, whatever the split.
func RowsSum(p engine.Problem, first int64) uint64 {
	var sum uint64
	var head [16]byte
	tab := dualsCRC()
	for k := range p.X.Rows {
		binary.LittleEndian.PutUint64(head[:], math.Float64bits(p.B[k]))
		h := head[:8]
		if p.SampleWeights != nil {
			binary.LittleEndian.PutUint64(head[8:], math.Float64bits(p.SampleWeights[k]))
			h = head[:]
		}
		val, idx := p.X.Row(k)
		crc := crc32.Update(0, tab, h)
		crc = crc32.Update(crc, tab, bytesOf(idx))
		crc = crc32.Update(crc, tab, bytesOf(val))
		sum += mix64(uint64(crc) ^ mix64(uint64(first+int64(k))))
	}
	return sum
}

// FinishDataSum returns DataSum from the rows' part of all n rows
// (RowsSum, or the sum of the parts of the ranks' shares) and the
// number of columns.
func FinishDataSum(rows uint64, n int64, cols int) uint64 {
	return mix64(rows ^ mix64(uint64(n)^mix64(uint64(cols))))
}

// mix64 is SplitMix64's finaliser: every bit of x moves about half the
// bits of the result.
func mix64(x uint64) uint64 {
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	return x ^ x>>31
}

// WeightsSum returns a CRC-32C of the weights' bits as a model file keeps
// them: Save writes the shortest representation that reads back to the
// same float64, but drops the zeros of a sparse model, which Load reads
// back as +0, so a −0 counts as +0 here.
func WeightsSum(w []float64) uint32 {
	var crc uint32
	var buf [8 << 10]byte
	for len(w) > 0 {
		n := min(len(w), len(buf)/8)
		for i, x := range w[:n] {
			binary.LittleEndian.PutUint64(buf[8*i:], math.Float64bits(x+0))
		}
		crc = crc32.Update(crc, dualsCRC(), buf[:8*n])
		w = w[n:]
	}
	return crc
}

// bytesOf returns the memory of s as bytes.
func bytesOf[T int64 | int32 | float64](s []T) []byte {
	if len(s) == 0 {
		return nil
	}
	var zero T
	return unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(s))), len(s)*int(unsafe.Sizeof(zero)))
}

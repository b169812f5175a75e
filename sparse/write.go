package sparse

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"strconv"
)

// WriteLIBSVM writes d in canonical LIBSVM form: one "label idx:val ..." line
// per row, with 1-based indices, single spaces, a newline after every row, and
// numbers formatted by strconv.FormatFloat(v, 'g', -1, 64), the shortest form
// that parses back to the same bits. Reading the output back with
// ReadOptions{NumFeatures: d.X.Cols} therefore reproduces d bit for bit
// (explicit zeros included), and writing that again reproduces the bytes.
// It returns an error, before writing anything, if d is not a valid dataset
// or holds a NaN or infinity, which the reader would refuse.
func WriteLIBSVM(w io.Writer, d *Dataset) error {
	if err := d.check(); err != nil {
		return err
	}
	bw := bufio.NewWriterSize(w, 64<<10)
	m := d.X
	for i := 0; i < m.Rows; i++ {
		// AvailableBuffer lets the line be formatted straight into the
		// writer's buffer, without an intermediate allocation.
		b := strconv.AppendFloat(bw.AvailableBuffer(), d.Y[i], 'g', -1, 64)
		val, idx := m.Row(i)
		for k, j := range idx {
			b = append(b, ' ')
			b = strconv.AppendInt(b, int64(j)+1, 10)
			b = append(b, ':')
			b = strconv.AppendFloat(b, val[k], 'g', -1, 64)
		}
		b = append(b, '\n')
		if _, err := bw.Write(b); err != nil {
			return err
		}
	}
	return bw.Flush()
}

// check verifies that d can be written and read back: a valid matrix, one
// finite label per row, finite values and rows whose squared norms do not
// overflow.
func (d *Dataset) check() error {
	if d == nil || d.X == nil {
		return errors.New("sparse: nil dataset or matrix")
	}
	if err := d.X.Validate(); err != nil {
		return fmt.Errorf("sparse: dataset %q: %w", d.Name, err)
	}
	if len(d.Y) != d.X.Rows {
		return fmt.Errorf("sparse: dataset %q: %d labels for %d rows", d.Name, len(d.Y), d.X.Rows)
	}
	if k := firstNonFinite(d.Y); k >= 0 {
		return fmt.Errorf("sparse: dataset %q: label of row %d is %v", d.Name, k, d.Y[k])
	}
	if k := firstBeyond(d.X.Values, hugeValue); k >= 0 {
		if err := d.X.checkValuesFrom(k); err != nil {
			return fmt.Errorf("sparse: dataset %q: %w", d.Name, err)
		}
	}
	return nil
}

// firstNonFinite returns the index of the first NaN or infinity in s, or −1.
func firstNonFinite(s []float64) int {
	for k, v := range s {
		// v−v is NaN exactly when v is NaN or ±Inf: one subtraction and
		// one comparison per element.
		if v-v != 0 {
			return k
		}
	}
	return -1
}

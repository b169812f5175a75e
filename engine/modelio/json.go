package modelio

import (
	"encoding/json"
	"fmt"
	"io"
	"os"

	"github.com/adaspdc/adaspdc/engine"
)

// Save writes m to path as indented JSON (the fields are listed in the
// package documentation), atomically: path holds either its old content or
// the whole model, never part of it. It does not validate m; Load accepts
// only models that engine.Model.Validate accepts.
func Save(path string, m *engine.Model) error {
	return writeAtomic(path, func(w io.Writer) error {
		enc := json.NewEncoder(w)
		enc.SetIndent("", " ")
		return enc.Encode(m)
	})
}

// Load reads a model written by Save and validates it. Its errors name
// path: a file that cannot be read, is not a JSON model, or holds a model
// that engine.Model.Validate rejects (weights that do not match dim and
// bias, a non-finite weight, an unknown loss) is reported as such.
func Load(path string) (*engine.Model, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var m engine.Model
	if err := json.Unmarshal(data, &m); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if err := m.Validate(); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return &m, nil
}

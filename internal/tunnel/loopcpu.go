package tunnel

import "sync"

// cpuSlots places a process's relay threads on CPUs (LinkCPUsSpread): a new link goes to
// the CPU with the fewest, the lowest-numbered of those, so the links of one entry, and of
// several entries at one exit, spread over the CPUs; a link gives its CPU back when it
// ends.
type cpuSlots struct {
	mu    sync.Mutex
	loops map[int]int // CPU → links placed on it
}

// take picks a CPU out of allowed (ascending, not empty) and counts a link on it.
func (s *cpuSlots) take(allowed []int) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.loops == nil {
		s.loops = map[int]int{}
	}
	best := allowed[0]
	for _, c := range allowed[1:] {
		if s.loops[c] < s.loops[best] {
			best = c
		}
	}
	s.loops[best]++
	return best
}

// put counts a link off cpu.
func (s *cpuSlots) put(cpu int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.loops[cpu]--; s.loops[cpu] <= 0 {
		delete(s.loops, cpu)
	}
}

// loopCPUs places the process's relay threads.
var loopCPUs cpuSlots

// cpuPick is the CPU taken for one link's relay thread; nil holds none.
type cpuPick struct {
	cpu  int
	once sync.Once
}

// pickCPU takes a CPU for a link about to open, or nil when Config.LinkCPUs leaves the
// relay threads to the kernel or the process may use one CPU only. An entry picks when it
// dials a link and an exit when it accepts a connection (given back if that is no link),
// in the order the links open: both ends of a link on one machine then pick the same CPU
// (a link's relay loop starts later, when goroutines may run in either order).
func (t *Tunnel) pickCPU() *cpuPick {
	if t.cfg.LinkCPUs != LinkCPUsSpread {
		return nil
	}
	allowed := allowedCPUs()
	if len(allowed) < 2 {
		return nil
	}
	return &cpuPick{cpu: loopCPUs.take(allowed)}
}

// release gives the CPU back, once; nil-safe.
func (p *cpuPick) release() {
	if p != nil {
		p.once.Do(func() { loopCPUs.put(p.cpu) })
	}
}

package public

// Checking reports whether a check of the page id runs now.
func (p *Pages) Checking(id string) bool {
	p.mu.Lock()
	pg := p.pages[id]
	p.mu.Unlock()
	if pg == nil {
		return false
	}
	pg.mu.Lock()
	defer pg.mu.Unlock()
	return pg.busy
}

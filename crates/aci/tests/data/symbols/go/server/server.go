// Package server answers GET and PUT over HTTP from a store.Store.
package server

import (
	"fmt"
	"io"
	"net/http"
	"time"

	"example.com/kv/store"
)

// Handler answers one request kind.
type Handler func(w http.ResponseWriter, r *http.Request)

// Server routes requests to a Store.
type Server struct {
	st     *store.Store
	routes map[string]Handler
}

// New makes a Server; the "New" in this comment and in strings is not a reference.
func New(st *store.Store) *Server {
	srv := &Server{st: st, routes: map[string]Handler{}}
	srv.routes[http.MethodGet] = srv.handleGet
	srv.routes[http.MethodPut] = srv.handlePut
	return srv
}

// ServeHTTP dispatches on the method.
func (srv *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h, ok := srv.routes[r.Method]
	if !ok {
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	h(w, r)
}

func (srv *Server) handleGet(w http.ResponseWriter, r *http.Request) {
	e, err := srv.st.Get(r.URL.Path)
	if err != nil {
		http.NotFound(w, r)
		return
	}
	fmt.Fprintln(w, e.Value)
}

func (srv *Server) handlePut(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	key, entry, err := store.Parse(string(body))
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	srv.st.Put(key, entry.Value, entry.Kind, 0)
	w.WriteHeader(http.StatusNoContent)
}

// Run serves until the listener fails.
func Run(cfg store.Config) error {
	srv := New(store.New(nil))
	s := &http.Server{
		Addr:         cfg.Addr,
		Handler:      srv,
		ReadTimeout:  time.Duration(cfg.TTL) * time.Second,
		WriteTimeout: 10 * time.Second,
	}
	return s.ListenAndServe()
}

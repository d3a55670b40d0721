/**
 * FFM groundwork shared by every backend: library loading with an availability probe, lazy symbol binding, errno
 * capture, calls through C ops tables, struct layouts with C alignment, and a guard for signal handlers.
 */
package io.rdma4j.ffi;

/** Engine internals: planner, progress threads, registration cache, notification channels, rendezvous glue. Not API. */
package io.rdma4j.engine.internal;

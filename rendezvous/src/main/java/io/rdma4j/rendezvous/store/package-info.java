/**
 * Where a directory keeps its peers, leases and publications: {@link io.rdma4j.rendezvous.store.DirectoryStore}, held
 * in memory by default or in a distributed store (etcd, module {@code rdma4j-rendezvous-etcd}) found by ServiceLoader.
 */
package io.rdma4j.rendezvous.store;

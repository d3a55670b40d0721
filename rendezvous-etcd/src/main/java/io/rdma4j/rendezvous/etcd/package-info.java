/**
 * The rendezvous directory's state in etcd: announcements are keys under etcd leases, publications are keys under their
 * owner's lease, and watch is an etcd watch. Opened by URL ({@code etcd://HOST:PORT,...}) through
 * {@link io.rdma4j.rendezvous.store.DirectoryStores}.
 */
package io.rdma4j.rendezvous.etcd;

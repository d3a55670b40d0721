package io.rdma4j.rendezvous.etcd;

import io.rdma4j.rendezvous.store.DirectoryStore;
import io.rdma4j.rendezvous.store.DirectoryStoreProvider;

/**
 * Opens {@code etcd://HOST:PORT[,HOST:PORT...][/CLUSTER]} and {@code http://HOST:PORT[,...]} as an {@link EtcdStore}.
 */
public final class EtcdStoreProvider implements DirectoryStoreProvider {
    @Override
    public boolean accepts(String url) {
        return url.startsWith("etcd://") || url.startsWith("http://");
    }

    @Override
    public DirectoryStore open(String url) {
        return EtcdStore.open(EtcdUrl.parse(url));
    }
}

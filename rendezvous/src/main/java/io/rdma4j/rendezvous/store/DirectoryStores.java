package io.rdma4j.rendezvous.store;

import java.util.ServiceLoader;

/** Opens a {@link DirectoryStore} by URL through the {@link DirectoryStoreProvider}s on the class path. */
public final class DirectoryStores {
    private DirectoryStores() {}

    /** @return whether {@code target} names a store ({@code etcd://...}) rather than a directory ({@code host:port}) */
    public static boolean isStoreUrl(String target) {
        return target.contains("://");
    }

    /**
     * @throws IllegalArgumentException when no provider on the class path opens {@code url}, naming the module to add
     */
    public static DirectoryStore open(String url) {
        for (DirectoryStoreProvider p : ServiceLoader.load(DirectoryStoreProvider.class)) {
            if (p.accepts(url)) {
                return p.open(url);
            }
        }
        throw new IllegalArgumentException("no directory store opens '" + url + "'"
                + (url.startsWith("etcd://") || url.startsWith("http://")
                        ? ": put io.rdma4j:rdma4j-rendezvous-etcd on the class path"
                        : ": expected etcd://HOST:PORT[,HOST:PORT...] with rdma4j-rendezvous-etcd on the class path"));
    }
}

package io.rdma4j.ffi;

import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.invoke.MethodHandle;

/**
 * A C function bound lazily: {@link #handle()} resolves the symbol on first use and fails then, naming the function and
 * the library. Hot paths read the handle once into a final field of the object that uses it.
 */
public final class NativeFunction {
    private final NativeLibrary library;
    private final String cName;
    private final FunctionDescriptor descriptor;
    private final Linker.Option[] options;
    private volatile MethodHandle handle;

    NativeFunction(NativeLibrary library, String cName, FunctionDescriptor descriptor, Linker.Option... options) {
        this.library = library;
        this.cName = cName;
        this.descriptor = descriptor;
        this.options = options.clone();
    }

    /** @return the C name, e.g. {@code fi_getinfo} */
    public String name() {
        return cName;
    }

    /** @return true if the library is loaded and exports this symbol */
    public boolean isPresent() {
        return library.find(cName).isPresent();
    }

    public MethodHandle handle() {
        MethodHandle h = handle;
        if (h == null) {
            synchronized (this) {
                h = handle;
                if (h == null) {
                    h = library.bind(cName, descriptor, options);
                    handle = h;
                }
            }
        }
        return h;
    }
}

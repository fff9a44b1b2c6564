// Test images drawn by Python inside a sandbox, with nothing but the standard library.

/** Python (no imaging library) writing an RGBA PNG: the left half opaque red, the right half transparent. */
export const PNG_WRITER = `
import os, struct, zlib
def png(path, width, height, row, idat=None):
    os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
    chunk = lambda kind, data: struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))
    header = struct.pack(">IIBBBBB", width, height, 8, 6, 0, 0, 0)
    body = idat if idat is not None else zlib.compress((b"\\x00" + row) * height)
    open(path, "wb").write(b"\\x89PNG\\r\\n\\x1a\\n" + chunk(b"IHDR", header) + chunk(b"IDAT", body) + chunk(b"IEND", b""))
def half_red(path, width, height):
    png(path, width, height, b"\\xff\\x00\\x00\\xff" * (width // 2) + b"\\x00\\x00\\x00\\x00" * (width - width // 2))
`;

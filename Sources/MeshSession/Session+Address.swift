extension Session {
    /// Splits an address as people write it: `HOST:PORT`, `IPV4:PORT` or `[IPV6]:PORT`.
    ///
    /// For programs that take addresses on their command line (`--connect HOST:PORT`) and pass
    /// them to ``connect(host:port:redial:)``.
    /// - Parameter address: the text, untrusted.
    /// - Returns: the host (without brackets) and the port (1–65,535).
    /// - Throws: ``SessionError`` `invalidAddress`, naming what is wrong.
    ///
    /// This method is thread-safe (it touches no state).
    public static func parseAddress(_ address: String) throws(SessionError) -> (host: String, port: Int) {
        let host: Substring, portText: Substring
        if address.hasPrefix("[") {
            guard let close = address.firstIndex(of: "]") else { throw .invalidAddress(address, "\"[\" without \"]\"") }
            host = address[address.index(after: address.startIndex)..<close]
            let rest = address[address.index(after: close)...]
            guard rest.hasPrefix(":") else { throw .invalidAddress(address, "no :PORT after the address") }
            portText = rest.dropFirst()
        } else {
            guard let colon = address.lastIndex(of: ":") else { throw .invalidAddress(address, "no port; expected HOST:PORT") }
            host = address[..<colon]
            portText = address[address.index(after: colon)...]
            guard !host.contains(":") else { throw .invalidAddress(address, "write an IPv6 address in brackets, e.g. [::1]:7000") }
        }
        guard !host.isEmpty else { throw .invalidAddress(address, "no host") }
        guard portText.allSatisfy({ $0.isASCII && $0.isNumber }), let port = Int(portText), (1...65_535).contains(port) else {
            throw .invalidAddress(address, "the port is not a number from 1 to 65535")
        }
        return (String(host), port)
    }
}

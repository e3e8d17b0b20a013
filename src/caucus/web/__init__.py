"""HTTP plumbing: bearer parsing, the error mapping, body limits, the Host/Origin guard and the
shield. The models that cross the wire live in `caucus.wire`."""

module snapshotlog

go 1.19

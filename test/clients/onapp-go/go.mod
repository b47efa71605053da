module cmi.test/onapp-go

go 1.19

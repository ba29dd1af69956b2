// not a kernel of any operator
